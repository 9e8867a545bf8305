'use strict'
// Which file answers `connector available` without oclif (bin/run.cjs): the CommonJS bundle
// `npm run build` makes (dist/cli/available-lean.cjs), or tsc's module it was made from, by the
// rule the daemon's start uses too (build-choice.cjs).
const path = require('node:path')
const { chooseBuild } = require('./build-choice.cjs')

/** @param {string} root the package root @returns {{ kind: 'bundle' | 'modules', file: string }} */
function leanEntry(root) {
  const bundle = path.join(root, 'dist', 'cli', 'available-lean.cjs')
  const modules = path.join(root, 'dist', 'cli', 'available-entry.js')
  const source = path.join(root, 'src', 'cli', 'available-entry.ts')
  const kind = chooseBuild({ bundle, modules, source })
  return { kind, file: kind === 'bundle' ? bundle : modules }
}

module.exports = { leanEntry }
