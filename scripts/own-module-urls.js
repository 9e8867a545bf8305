// A rolldown plugin both bundle scripts use. A bundled module's import.meta.url
// would be the bundle's, so the paths our modules make from it (version.ts →
// package.json, shim-target.ts → launcher.js, tutti-command.ts → bin/run.js)
// are pointed at each module's own file in dist/, which ships beside the
// bundle. An entry keeps its own URL where it checks that it is the file node
// was asked to run.
import path from 'node:path'

/**
 * import.meta.url of each module under `dist` but `entry` → that module's own file, relative to `outDir`.
 * @param {{ dist: string, outDir: string, entry?: string }} where
 * @returns {import('rolldown').Plugin}
 */
export const ownModuleUrls = ({ dist, outDir, entry }) => ({
  name: 'tutti-own-module-urls',
  transform(code, id) {
    if (id === entry || !id.startsWith(dist + path.sep) || !code.includes('import.meta.url')) return null
    const rel = path.relative(outDir, id).split(path.sep).join('/')
    return {
      code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`),
      map: null,
    }
  },
})
