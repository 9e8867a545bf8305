#!/usr/bin/env node
// `tutti connector available [--json]`, which agents run at the start of
// every session, is answered without loading oclif when oclif would do
// nothing else (dist/cli/available-entry.js); everything else goes to oclif.
// Set on both paths: the daemon a CLI forks inherits it.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
const argv = process.argv.slice(2)
let answered = false
if (argv[0] === 'connector' && argv[1] === 'available') {
  const { answerAvailable } = await import('../dist/cli/available-entry.js')
  answered = await answerAvailable(argv)
}
if (!answered) await import('./oclif.js')
