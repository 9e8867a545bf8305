import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO } from './tutti.js'

const SDK_SERVER = pathToFileURL(path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist/index.mjs')).href
const SDK_STDIO = pathToFileURL(path.join(REPO, 'node_modules/@modelcontextprotocol/server/dist/stdio.mjs')).href

/**
 * A stdio MCP server with one tool, `hello`, answering `<name> <version>`
 * (and, for a native package, what its compiled addon returns). It imports
 * the SDK by absolute URL: the package has no dependencies to install.
 */
const serverSource = (name: string, version: string, native: boolean) => `#!/usr/bin/env node
import { Server } from '${SDK_SERVER}'
import { StdioServerTransport } from '${SDK_STDIO}'
import { createRequire } from 'node:module'
// loaded at start, as a native module is: a package whose install script never ran dies here
const addon = ${native ? "createRequire(import.meta.url)('./build/Release/addon.node')" : 'undefined'}
const info = { name: ${JSON.stringify(name)}, version: ${JSON.stringify(version)} }
const server = new Server(info, { capabilities: { tools: {} } })
const hello = { name: 'hello', description: 'Say which package answers', inputSchema: { type: 'object' } }
server.setRequestHandler('tools/list', async () => ({ tools: [hello] }))
const answer = info.name + ' ' + info.version + (addon ? ' ' + addon.hello() : '')
server.setRequestHandler('tools/call', async () => ({ content: [{ type: 'text', text: answer }] }))
await server.connect(new StdioServerTransport())
`

/** A C addon (N-API) that node-gyp builds from binding.gyp with the local node headers. */
const ADDON_C = `#include <node_api.h>
static napi_value Hello(napi_env env, napi_callback_info info) {
  napi_value s;
  napi_create_string_utf8(env, "native-ok", NAPI_AUTO_LENGTH, &s);
  return s;
}
NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "hello", NAPI_AUTO_LENGTH, Hello, NULL, &fn);
  napi_set_named_property(env, exports, "hello", fn);
  return exports;
}
`

/** An npm MCP server package directory (one bin); `native` adds a binding.gyp its install must build. */
export interface ServerPackageOptions {
  native?: boolean
  dependencies?: Record<string, string>
}

export function serverPackage(name: string, version: string, options: ServerPackageOptions = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-npm-pkg-'))
  const bin = { [name.split('/').pop()!]: 'server.mjs' }
  const pkg: Record<string, unknown> = { name, version, description: `${name} fixture`, type: 'module', bin }
  if (options.dependencies) pkg.dependencies = options.dependencies
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2))
  fs.writeFileSync(path.join(dir, 'server.mjs'), serverSource(name, version, !!options.native), { mode: 0o755 })
  if (options.native) {
    const gyp = { targets: [{ target_name: 'addon', sources: ['addon.c'] }] }
    fs.writeFileSync(path.join(dir, 'binding.gyp'), JSON.stringify(gyp))
    fs.writeFileSync(path.join(dir, 'addon.c'), ADDON_C)
  }
  return dir
}

/** `npm pack` of a package directory: the .tgz's path. */
export function packTarball(dir: string, dest: string): string {
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', dest, '--loglevel=error']
  const out = execFileSync('npm', args, { cwd: dir, encoding: 'utf8' })
  const filename = (JSON.parse(out) as Array<{ filename: string }>)[0]!.filename
  return path.join(dest, filename.replace(/^@/, '').replace(/\//g, '-'))
}
