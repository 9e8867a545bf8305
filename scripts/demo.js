#!/usr/bin/env node
// `npm run demo`: the main job on the bundled example connectors. Install
// them into a state directory, connect the one that needs a credential, show
// what an agent sees (`tutti connector available`), then use each native
// mechanism the way an agent would: MCP tools through the `connector` server
// (both protocol eras), the CLI shim on PATH, and the Skill roots.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

const repo = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const stateDir = process.env.TUTTI_STATE_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-demo-'))
const env = {
  ...process.env,
  TUTTI_STATE_DIR: stateDir,
  // the example connectors run MCP servers installed from npm (mcp-server-memory, mcp-server-everything)
  PATH: `${path.join(repo, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`,
  EVERYTHING_API_KEY: process.env.EVERYTHING_API_KEY ?? 'demo-key-not-a-real-secret',
}
/** @param {string[]} args */
const tutti = (...args) =>
  execFileSync(process.execPath, [path.join(repo, 'bin', 'run.js'), ...args], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
/** @param {string} title */
const step = (title) => process.stdout.write(`\n== ${title}\n`)

step(`state directory: ${stateDir}`)
for (const name of ['notes', 'everything']) {
  step(`tutti connector install examples/connectors/${name}`)
  process.stdout.write(tutti('connector', 'install', path.join(repo, 'examples', 'connectors', name)))
}
step('tutti connector connect everything --from-env EVERYTHING_API_KEY')
process.stdout.write(tutti('connector', 'connect', 'everything', '--from-env', 'EVERYTHING_API_KEY'))

step('tutti connector available')
process.stdout.write(tutti('connector', 'available'))

step('tutti session prepare --provider claude --workspace demo --session demo-1 --json  (token elided here)')
/**
 * @type {{ mcpServers: { name: string, url: string, headers: Record<string, string> }[],
 *   projection: { args: string[] }, skillRoots: { connector: string }[], env: Record<string, string> }}
 */
const runtime = JSON.parse(
  tutti('session', 'prepare', '--provider', 'claude', '--workspace', 'demo', '--session', 'demo-1', '--json'),
)
const server = runtime.mcpServers[0]
process.stdout.write(`MCP server "${server.name}" at ${server.url}\n`)
process.stdout.write(`Claude Code flags: ${runtime.projection.args.join(' ')}\n`)
process.stdout.write(`Skill roots: ${runtime.skillRoots.map((r) => r.connector).join(', ')}\n`)

/** @param {{ content: unknown }} result @returns {string} its first block's text (the examples answer with text) */
const firstText = (result) => /** @type {{ text: string }[]} */ (result.content)[0].text

for (const [era, options] of /** @type {[string, import('@modelcontextprotocol/client').ClientOptions][]} */ ([
  ['2026-07-28', { versionNegotiation: { mode: { pin: '2026-07-28' } } }],
  ['2025-06-18', { supportedProtocolVersions: ['2025-06-18'] }],
])) {
  step(`an MCP client (${era}) on the connector server`)
  const client = new Client({ name: 'tutti-demo', version: '1' }, options)
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
  )
  const { tools } = await client.listTools()
  process.stdout.write(
    `tools/list: ${tools.length} tools, e.g. ${tools
      .slice(0, 4)
      .map((t) => t.name)
      .join(', ')}\n`,
  )
  const echo = await client.callTool({ name: 'everything_echo', arguments: { message: `hello over ${era}` } })
  process.stdout.write(`tools/call everything_echo → ${firstText(echo)}\n`)
  if (era === '2026-07-28') {
    await client.callTool({
      name: 'notes_create_entities',
      arguments: {
        entities: [{ name: 'tutti', entityType: 'project', observations: ['one MCP server for every connector'] }],
      },
    })
    const found = await client.callTool({ name: 'notes_search_nodes', arguments: { query: 'tutti' } })
    process.stdout.write(`tools/call notes_search_nodes → ${firstText(found).replace(/\s+/g, ' ').slice(0, 120)}\n`)
  }
  await client.close()
}

step('the CLI shims, as an agent runs them from PATH')
const shimEnv = { ...env, PATH: runtime.env.PATH }
for (const args of [
  ['tutti-connector-notes', 'list'],
  ['tutti-connector-everything', 'sum', '1', '2', '39'],
  ['tutti-connector-everything', 'whoami'],
]) {
  process.stdout.write(
    `$ ${args.join(' ')}\n${execFileSync(args[0], args.slice(1), { env: shimEnv, encoding: 'utf8' })}`,
  )
}

step('tutti daemon doctor')
process.stdout.write(tutti('daemon', 'doctor'))
step('tutti daemon status')
process.stdout.write(tutti('daemon', 'status'))

if (process.argv.includes('--keep')) {
  step(`daemon left running; stop it with: TUTTI_STATE_DIR=${stateDir} ./bin/run.cjs daemon stop`)
} else {
  step('tutti daemon stop')
  process.stdout.write(tutti('daemon', 'stop'))
}
