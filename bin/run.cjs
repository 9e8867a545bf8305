#!/usr/bin/env node
// `tutti`. `connector available [--json]`, which agents run at the start of
// every session, is answered without oclif when oclif would do nothing else,
// and from one CommonJS bundle (lean-entry.cjs): no ES module loader, no
// module graph. The lean entry declines anything else, and oclif answers it.
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { leanEntry } = require('./lean-entry.cjs')

// set on every path: the daemon a CLI forks inherits it
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
const argv = process.argv.slice(2)

async function main() {
  // a source checkout before its first build: say what to run, not a module-not-found stack
  if (!fs.existsSync(path.join(__dirname, '..', 'dist', 'commands'))) {
    process.stderr.write(
      `tutti: not built yet (no ${path.join(__dirname, '..', 'dist')}); ` +
        `run \`npm run build\` in ${path.join(__dirname, '..')} first\n`,
    )
    process.exitCode = 1
    return
  }
  if (argv[0] === 'connector' && argv[1] === 'available') {
    const lean = leanEntry(path.join(__dirname, '..'))
    const entry = lean.kind === 'bundle' ? require(lean.file) : await import(pathToFileURL(lean.file).href)
    if (await entry.answerAvailable(argv)) return
  }
  await import('./oclif.js')
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ? err.stack : err}\n`)
  process.exitCode = 1
})
