import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lazyConnector, memoryConnector } from '../support/fixture-connector.js'
import { connected, installed, prepared } from '../support/in-process.js'
import { legacyClient, modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, REPO, tempStateDir } from '../support/tutti.js'

// Seed 004: every capability is reached the same generic way: discovered
// (tools/list) and called by name (tools/call), with zero per-connector code.
describe('one generic discover + call path for every connector kind', () => {
  let dir: string
  let binding: Binding
  let remote: ChildProcess
  beforeAll(async () => {
    dir = tempStateDir('generic')
    remote = spawn(process.execPath, [path.join(REPO, 'test/fixtures/http-server.mjs')], {
      env: { ...process.env, FIXTURE_HTTP_TOKEN: 'generic-remote-token', FIXTURE_HTTP_USER: 'owner' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const port = await new Promise<number>((resolve) =>
      remote.stdout!.on('data', (d: Buffer) => resolve(Number(/listening (\d+)/.exec(d.toString())![1]))),
    )
    const remoteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-generic-remote-'))
    fs.writeFileSync(
      path.join(remoteDir, 'tutti-connector.json'),
      JSON.stringify({
        schemaVersion: 1,
        key: 'remote',
        name: 'Remote',
        version: '1.0.0',
        auth: { kind: 'env', variables: [{ name: 'REMOTE_TOKEN' }] },
        mcp: {
          transport: 'http',
          url: `http://127.0.0.1:${port}/mcp`,
          headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' },
        },
      }),
    )
    await installed(dir, memoryConnector('journal')) // stdio, eager (npm memory server)
    await installed(dir, lazyConnector('lazyfx')) // stdio, lazy (declared tools)
    await installed(dir, remoteDir) // remote Streamable HTTP
    await connected(dir, 'remote', { env: { REMOTE_TOKEN: 'generic-remote-token' } })
    binding = (await prepared(dir, { provider: 'tutti-agent', workspace: 'owner', session: 'generic' })).mcpServers[0]!
  })
  afterAll(async () => {
    remote?.kill()
    await cleanupState(dir)
  })

  const kinds = [
    { kind: 'stdio eager', tool: 'journal_read_graph', args: {}, expect: /entities/ },
    { kind: 'stdio lazy', tool: 'lazyfx_echo', args: { message: 'lazy hello' }, expect: /lazy hello/ },
    { kind: 'remote HTTP', tool: 'remote_whoami', args: {}, expect: /authorized as owner/ },
  ]

  for (const make of [modernClient, legacyClient]) {
    it(`${make.name}: discover all three kinds with one tools/list, call each by name the same way`, async () => {
      const client = await make(binding)
      const discovered = new Set((await client.listTools()).tools.map((t) => t.name))
      for (const k of kinds) expect(discovered.has(k.tool), k.kind).toBe(true)
      const callByName = async (name: string, args: Record<string, unknown>) =>
        JSON.stringify((await client.callTool({ name, arguments: args })).content)
      for (const k of kinds) expect(await callByName(k.tool, k.args), k.kind).toMatch(k.expect)
      await client.close()
    })
  }

  it('the daemon holds no per-connector code or configuration', () => {
    const keys = ['notes', 'everything', 'memory', 'journal', 'remote', 'lazyfx', 'github']
    const offenders: string[] = []
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name)
        if (e.isDirectory()) walk(p)
        else if (p.endsWith('.ts')) {
          const src = fs.readFileSync(p, 'utf8')
          for (const k of keys)
            if (new RegExp(`['"\`]${k}['"\`_]`).test(src)) offenders.push(`${path.relative(REPO, p)}: "${k}"`)
        }
      }
    }
    walk(path.join(REPO, 'src', 'runtime'))
    expect(offenders).toEqual([])
  })
})
