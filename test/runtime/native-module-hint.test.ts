import { describe, expect, it } from 'vitest'
import { nativeModuleHint } from '../../src/runtime/upstream/native-module-hint.js'

describe('nativeModuleHint', () => {
  it('names --allow-scripts for the loaders people use, not the path list they print', () => {
    const bindings = [
      '/srv/node_modules/bindings/bindings.js:126',
      '  throw err;',
      'Error: Could not locate the bindings file. Tried:',
      ' → /srv/node_modules/better-sqlite3/build/better_sqlite3.node',
      ' → /srv/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
    ].join('\n')
    expect(nativeModuleHint(bindings)).toBe(
      'a native module is not built (Could not locate the bindings file): its install scripts did not run; ' +
        'install the connector again with --allow-scripts to build it',
    )
    const missing = "Error: Cannot find module './build/Release/addon.node'"
    expect(nativeModuleHint(missing)).toContain("(Cannot find module './build/Release/addon.node')")
    const prebuilt = 'Error: No native build was found for platform=linux arch=x64 runtime=node abi=115'
    expect(nativeModuleHint(prebuilt)).toContain('No native build was found')
    const abi = "The module '/x/a.node'\nwas compiled against a different Node.js version using NODE_MODULE_VERSION 127"
    expect(nativeModuleHint(abi)).toContain('built for another Node.js version')
  })

  it("recognises bindings' path list alone (its heading can fall out of the kept tail, as mcp-sqlite's does)", () => {
    const tried =
      " '/r/node_modules/sqlite3/build/Release/node_sqlite3.node',\n " +
      "'/r/node_modules/sqlite3/lib/binding/node-v115-linux-x64/node_sqlite3.node'\n]"
    expect(nativeModuleHint(tried)).toContain('(no built .node file found)')
  })

  it('leaves other crashes alone', () => {
    expect(nativeModuleHint("Error: Cannot find module 'express'")).toBeUndefined()
    expect(nativeModuleHint('SLACK_BOT_TOKEN is not set')).toBeUndefined()
  })
})
