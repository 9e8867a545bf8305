'use strict'
// The one rule for which build of a program runs, asked by the CLI's lean entry (lean-entry.cjs)
// and by the daemon's start (src/runtime/client/daemon-process.ts): the bundle `npm run build`
// makes; in a source checkout, unless tsc rebuilt the modules after it (a build without the bundle
// step), then the modules, which are current. An installed package is never second-guessed:
// unpacking gives its files mtimes in whatever order it wrote them. CommonJS, and in bin/, so that
// both can load it before any module graph: bin/ sits as far from dist/ as from src/.
const fs = require('node:fs')

/**
 * @param {{ bundle: string, modules: string, source: string }} builds the bundle, tsc's modules it
 *   was made from, and a file of the source tree (present only in a checkout)
 * @returns {'bundle' | 'modules'}
 */
function chooseBuild(builds) {
  const bundled = fs.statSync(builds.bundle, { throwIfNoEntry: false })
  if (!bundled) return 'modules'
  if (!fs.existsSync(builds.source)) return 'bundle'
  const built = fs.statSync(builds.modules, { throwIfNoEntry: false })
  return !built || bundled.mtimeMs >= built.mtimeMs ? 'bundle' : 'modules'
}

module.exports = { chooseBuild }
