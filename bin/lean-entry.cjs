'use strict'
// Which file answers `connector available` without oclif (bin/run.cjs): the
// CommonJS bundle `npm run build` makes (dist/cli/available-lean.cjs), or
// tsc's module it was made from when tsc rebuilt that after the bundle in a
// source checkout. An installed package (no src/) is never second-guessed:
// unpacking gives its files mtimes in whatever order it wrote them.
const fs = require('node:fs')
const path = require('node:path')

/** @param {string} root the package root @returns {{ kind: 'bundle' | 'modules', file: string }} */
function leanEntry(root) {
  const bundle = path.join(root, 'dist', 'cli', 'available-lean.cjs')
  const modules = path.join(root, 'dist', 'cli', 'available-entry.js')
  const bundled = fs.statSync(bundle, { throwIfNoEntry: false })
  if (!bundled) return { kind: 'modules', file: modules }
  if (!fs.existsSync(path.join(root, 'src'))) return { kind: 'bundle', file: bundle }
  const built = fs.statSync(modules, { throwIfNoEntry: false })
  return !built || bundled.mtimeMs >= built.mtimeMs
    ? { kind: 'bundle', file: bundle }
    : { kind: 'modules', file: modules }
}

module.exports = { leanEntry }
