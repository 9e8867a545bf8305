import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runProgram } from '../support/package-install.js'
import { CLAUDE_OFFLINE, claudeBinary, CodexAppServer, codexBinary } from '../support/agents.js'
import { bridgeClient, MODERN_ENVELOPE, RawBridge, TOKEN_SHAPE, type Era } from '../support/bridge-clients.js'
import { killDaemonProven } from '../support/daemon-kill.js'
import { eventually, until } from '../support/eventually.js'
import { faultConnector, memoryConnector } from '../support/fixture-connector.js'
import { installed } from '../support/in-process.js'
import { BIN, cleanupState, isAlive, readDaemonJson, REPO, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

/** A README block marked `<!-- readme-test: name -->`, as written. */
function readmeBlock(name: string, lang = 'sh'): string {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8')
  const m = new RegExp(`<!-- readme-test: ${name} -->\\n\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(readme)
  if (!m) throw new Error(`README.md has no ${lang} block marked readme-test: ${name}`)
  return m[1]!
}

const run = (file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) =>
  runProgram(file, args, { env, cwd, timeout: 90_000 })

const text = (r: any) => r.content?.[0]?.text
const bridgeSessions = (dir: string) =>
  Object.values(
    JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8')).sessions as Record<
      string,
      { provider: string; session: string }
    >,
  ).filter((s) => s.provider === 'bridge')

describe('tutti session bridge', () => {
  let dir: string
  let trace: string
  /** Every bridge's stderr and every answer a client got: none may hold a token. */
  const seen: string[] = []

  beforeAll(async () => {
    dir = tempStateDir('bridge')
    trace = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-bridge-trace-')), 'calls')
    await installed(dir, faultConnector({ key: 'fx', env: { FIXTURE_TRACE: trace } }))
  })
  afterAll(async () => {
    try {
      const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      for (const t of [log, ...seen]) expect(t).not.toMatch(TOKEN_SHAPE)
    } finally {
      await cleanupState(dir)
      fs.rmSync(path.dirname(trace), { recursive: true, force: true })
    }
  })

  for (const era of ['legacy', 'modern'] as Era[]) {
    it(
      `${era === 'legacy' ? '2025-06-18' : '2026-07-28'} stdio client: tools.listChanged, tools/list and ` +
        `tools/call relayed, x-mcp-header arguments as Mcp-Param headers`,
      async () => {
        const { client, pid, stderr } = await bridgeClient(dir, era)
        try {
          expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })
          const names = (await client.listTools()).tools.map((t) => t.name)
          expect(names).toEqual(expect.arrayContaining(['fx_echo', 'fx_slow', 'fx_regional']))
          expect(text(await client.callTool({ name: 'fx_echo', arguments: { message: `hi ${era}` } }))).toBe(
            `hi ${era}`,
          )
          // a 2026-07-28 call must carry Mcp-Param-Region: the bridge builds it from the list it relayed
          expect(text(await client.callTool({ name: 'fx_regional', arguments: { region: 'eu-west ü' } }))).toBe(
            'region eu-west ü',
          )
          const failed = await client.callTool({ name: 'fx_fail', arguments: {} })
          expect(failed).toMatchObject({ isError: true, structuredContent: { reason: 'on purpose' } })
          // no token in the bridge's argv or environment
          const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
          const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8')
          expect(cmdline + environ).not.toMatch(TOKEN_SHAPE)
          expect(environ).not.toContain('TUTTI_CONNECTOR_TOKEN')
        } finally {
          await client.close()
          seen.push(stderr())
        }
      },
    )
  }

  it('a call the client cancels is cancelled at the upstream, in both eras', async () => {
    for (const era of ['legacy', 'modern'] as Era[]) {
      const { client, stderr } = await bridgeClient(dir, era)
      try {
        const before = Number(text(await client.callTool({ name: 'fx_cancellations', arguments: {} })))
        fs.rmSync(trace, { force: true })
        const ac = new AbortController()
        const call = client
          .callTool({ name: 'fx_slow', arguments: { ms: 60_000 } }, { signal: ac.signal })
          .catch((e: Error) => e)
        expect(await until(() => fs.existsSync(trace) && fs.readFileSync(trace, 'utf8').includes('slow'))).toBe(true)
        ac.abort()
        expect(await call).toBeInstanceOf(Error)
        // the upstream counts the calls it saw cancelled: the bridge's HTTP request ending cancelled this one
        const after = await eventually(
          async () => Number(text(await client.callTool({ name: 'fx_cancellations', arguments: {} }))),
          (n) => n > before,
        )
        expect(after, era).toBe(before + 1)
      } finally {
        await client.close()
        seen.push(stderr())
      }
    }
  })

  it(
    'a 2026-07-28 call of an x-mcp-header tool the bridge never saw listed: it learns the declarations and the ' +
      'call goes through',
    async () => {
      const raw = RawBridge.start(dir)
      try {
        raw.send({
          id: 1,
          method: 'tools/call',
          params: { name: 'fx_regional', arguments: { region: 'ap' }, _meta: MODERN_ENVELOPE },
        })
        const answer = await raw.answer(1)
        expect(answer.result?.content, JSON.stringify(answer)).toEqual([{ type: 'text', text: 'region ap' }])
      } finally {
        raw.end()
        await raw.exited
        seen.push(raw.stderr, ...raw.lines)
      }
    },
  )

  it(
    'a first message that is not MCP: the bridge answers it, ' + 'says why on stderr, revokes its session and exits 2',
    async () => {
      const before = bridgeSessions(dir).length
      const raw = RawBridge.start(dir, ['--session', 'bridge-not-mcp'])
      raw.send('hello, is this thing on?')
      const answer = await raw.next((m) => m.error?.code !== undefined, 0)
      expect(answer).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } })
      const exited = await raw.exited
      seen.push(raw.stderr, ...raw.lines)
      expect(exited.code, raw.stderr).toBe(2)
      expect(raw.stderr).toContain(
        'the first message on stdin is not an MCP message (Parse error: the line is not valid JSON): ' +
          'the bridge speaks MCP as newline-delimited JSON-RPC 2.0',
      )
      expect(raw.lines, 'stdout is the MCP stream: only the answer').toHaveLength(1)
      expect(bridgeSessions(dir).map((s) => s.session)).not.toContain('bridge-not-mcp')
      expect(bridgeSessions(dir)).toHaveLength(before)
    },
  )

  it(
    'a broken client message in a session gets a JSON-RPC error and the bridge keeps serving; ' +
      'bad command-line input exits 2',
    async () => {
      const raw = RawBridge.start(dir)
      try {
        // the client has spoken MCP: later broken lines are answered, not fatal
        raw.send({ id: 'first', method: 'ping' })
        await raw.answer('first')
        const broken: Array<[string, number, unknown]> = [
          ['this is not json', -32700, null],
          ['{"jsonrpc":"2.0","id":7,"method":', -32700, null],
          ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, null],
          ['"a string"', -32600, null],
          ['{"id":8,"method":"ping"}', -32600, 8],
          ['{"jsonrpc":"2.0","id":9,"method":42}', -32600, 9],
          ['{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', -32600, null],
          ['{"jsonrpc":"2.0","id":10,"method":"ping","params":[1]}', -32600, 10],
        ]
        for (const [i, [line, code, id]] of broken.entries()) {
          raw.send(line)
          const answer = await raw.next((m) => m.error?.code !== undefined, i + 1)
          expect(answer, line).toEqual({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } })
        }
        expect(raw.messages).toHaveLength(broken.length + 1)
        expect(raw.stderr).toContain('answered a broken client message with -32700')
        raw.send({
          id: 'after',
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        })
        expect((await raw.answer('after')).result.capabilities.tools).toEqual({ listChanged: true })
        raw.send({ id: 'list', method: 'tools/list' })
        expect((await raw.answer('list')).result.tools.map((t: { name: string }) => t.name)).toContain('fx_echo')
      } finally {
        raw.end()
        expect((await raw.exited).code).toBe(0)
        seen.push(raw.stderr, ...raw.lines)
      }
      for (const args of [['--no-such-flag'], ['--session', ''], ['extra-argument']]) {
        const res = await tutti(dir, ['session', 'bridge', ...args], { input: '' })
        expect(res.code, args.join(' ')).toBe(2)
        expect(res.stdout, 'stdout is the MCP stream: nothing else goes there').toBe('')
      }
    },
  )

  it('its session is revoked when the client closes stdin, and on SIGTERM', async () => {
    const before = bridgeSessions(dir).length
    const raw = RawBridge.start(dir, ['--session', 'bridge-sigterm'])
    raw.send({ id: 1, method: 'ping' })
    await raw.answer(1)
    expect(bridgeSessions(dir).map((s) => s.session)).toContain('bridge-sigterm')
    raw.child.kill('SIGTERM')
    expect(await raw.exited).toEqual({ code: 0, signal: null })
    expect(bridgeSessions(dir).map((s) => s.session)).not.toContain('bridge-sigterm')

    const { client } = await bridgeClient(dir, 'legacy', { args: ['--session', 'bridge-eof'] })
    expect(bridgeSessions(dir).map((s) => s.session)).toContain('bridge-eof')
    await client.close()
    expect(await until(() => !bridgeSessions(dir).some((s) => s.session === 'bridge-eof'))).toBe(true)
    expect(bridgeSessions(dir)).toHaveLength(before)
  })

  it(
    'tool changes reach both eras: ' +
      'a 2025 client gets notifications/tools/list_changed, a 2026 client on its listen stream',
    async () => {
      let legacyChanges = 0
      let modernChanges = 0
      const legacy = await bridgeClient(dir, 'legacy', { onToolsChanged: () => legacyChanges++ })
      const modern = await bridgeClient(dir, 'modern', { onToolsChanged: () => modernChanges++ })
      try {
        const sub = await modern.client.listen({ toolsListChanged: true })
        expect(sub.honoredFilter).toEqual({ toolsListChanged: true })
        await installed(dir, memoryConnector('journal'))
        expect(await until(() => legacyChanges > 0 && modernChanges > 0)).toBe(true)
        for (const c of [legacy, modern])
          expect((await c.client.listTools()).tools.map((t) => t.name)).toEqual(
            expect.arrayContaining(['journal_read_graph', 'fx_echo']),
          )
        await sub.close()
      } finally {
        await legacy.client.close()
        await modern.client.close()
        seen.push(legacy.stderr(), modern.stderr())
      }
    },
  )

  it(
    'kill -9 of the daemon: the call in flight gets an MCP error, the next call succeeds on a new daemon, ' +
      'listen streams carry on; the clients never notice',
    async () => {
      let legacyChanges = 0
      let modernChanges = 0
      const legacy = await bridgeClient(dir, 'legacy', { onToolsChanged: () => legacyChanges++ })
      const modern = await bridgeClient(dir, 'modern', { onToolsChanged: () => modernChanges++ })
      try {
        const sub = await modern.client.listen({ toolsListChanged: true })
        fs.rmSync(trace, { force: true })
        const inFlight = legacy.client.callTool({ name: 'fx_slow', arguments: { ms: 60_000 } }).then(
          (r) => ({ ok: true as const, r }),
          (e: Error) => ({ ok: false as const, e }),
        )
        // the upstream has the call: it is in flight at the daemon
        expect(await until(() => fs.existsSync(trace) && fs.readFileSync(trace, 'utf8').includes('slow'))).toBe(true)
        const killed = await killDaemonProven(dir)

        const failed = await inFlight
        expect(failed.ok).toBe(false)
        if (!failed.ok) expect(failed.e.message).toMatch(/tutti daemon went away/)

        // how soon is a benchmark's (bench/README.md, section cli: kill -9 recovery), not a bound a slow machine fails
        for (const c of [legacy, modern])
          expect(text(await c.client.callTool({ name: 'fx_echo', arguments: { message: 'after' } }))).toBe('after')
        const after = readDaemonJson(dir)!
        expect(after.pid).not.toBe(killed)
        // the streams came back on the new daemon, each with a list_changed (changes while it was gone were not seen)
        expect(await until(() => legacyChanges > 0 && modernChanges > 0)).toBe(true)
        const [l0, m0] = [legacyChanges, modernChanges]
        await installed(dir, memoryConnector('diary'))
        expect(await until(() => legacyChanges > l0 && modernChanges > m0)).toBe(true)
        expect(await Promise.race([sub.closed, Promise.resolve('open')])).toBe('open')
        expect([legacy.closed(), modern.closed()]).toEqual([false, false])
        expect([isAlive(legacy.pid), isAlive(modern.pid)]).toEqual([true, true])
      } finally {
        await legacy.client.close()
        await modern.client.close()
        seen.push(legacy.stderr(), modern.stderr())
      }
    },
  )

  it(
    'after `daemon stop --revoke-sessions` (every token revoked) and a start by someone else, the bridge re-mints: ' +
      'its stream comes back and calls work',
    async () => {
      let changes = 0
      const legacy = await bridgeClient(dir, 'legacy', { onToolsChanged: () => changes++ })
      try {
        expect(text(await legacy.client.callTool({ name: 'fx_echo', arguments: { message: 'before' } }))).toBe('before')
        await tuttiJson(dir, ['daemon', 'stop', '--revoke-sessions'])
        await tuttiJson(dir, ['daemon', 'start'])
        // no request of the client's: the bridge saw the new daemon.json and linked again by itself
        expect(await until(() => changes > 0)).toBe(true)
        expect(bridgeSessions(dir)).toHaveLength(1)
        expect(text(await legacy.client.callTool({ name: 'fx_echo', arguments: { message: 'again' } }))).toBe('again')
        await tuttiJson(dir, ['daemon', 'stop'])
        // nothing running now: the next call starts the daemon
        expect(text(await legacy.client.callTool({ name: 'fx_echo', arguments: { message: 'started' } }))).toBe(
          'started',
        )
        expect(legacy.closed()).toBe(false)
      } finally {
        await legacy.client.close()
        seen.push(legacy.stderr())
      }
      expect(
        await eventually(
          () => bridgeSessions(dir).length,
          (n) => n === 0,
        ),
      ).toBe(0)
    },
  )

  describe("the README's static configs, with the real clients from npm", () => {
    let home: string
    let workspace: string
    let bin: string
    let env: NodeJS.ProcessEnv
    beforeAll(() => {
      home = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-bridge-home-'))
      workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-bridge-ws-'))
      bin = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-bridge-bin-'))
      const write = (name: string, body: string) =>
        fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 })
      // `tutti`, `claude` and `codex` on PATH as a user has them. Codex starts stdio servers with a clean
      // environment (HOME, PATH, …), so this test's state dir goes with the command, as the default one would
      write('tutti', `TUTTI_STATE_DIR='${dir}' exec '${process.execPath}' '${BIN}' "$@"`)
      write('claude', `exec '${claudeBinary()}' "$@"`)
      write('codex', `exec '${codexBinary()}' "$@"`)
      env = {
        PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`,
        HOME: home,
        TUTTI_STATE_DIR: dir,
        RUST_LOG: 'warn',
        ...CLAUDE_OFFLINE,
      }
    })
    afterAll(() => {
      for (const d of [home, workspace, bin]) fs.rmSync(d, { recursive: true, force: true })
    })
    const claudeInit = (stdout: string) =>
      stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((m) => m.type === 'system' && m.subtype === 'init')
    const claudeSession = (extra: string[]) =>
      run(claudeBinary(), ['-p', 'hello', '--output-format', 'stream-json', '--verbose', ...extra], env, workspace)

    it(
      'Claude Code: `claude mcp add connector -- tutti session bridge`, then `claude mcp list` and a session see ' +
        'the connector tools',
      async () => {
        const added = await run('/bin/sh', ['-c', readmeBlock('bridge-claude')], env, workspace)
        expect(added.code, added.stderr).toBe(0)
        const list = await run(claudeBinary(), ['mcp', 'list'], env, workspace)
        expect(list.stdout).toMatch(/connector: tutti session bridge - [✓✔] Connected/)
        const session = await claudeSession([])
        seen.push(session.stdout, session.stderr)
        const init = claudeInit(session.stdout)
        expect(init, session.stdout + session.stderr).toBeDefined()
        expect(init.mcp_servers).toEqual(
          expect.arrayContaining([expect.objectContaining({ name: 'connector', status: 'connected' })]),
        )
        expect(init.tools).toEqual(expect.arrayContaining(['mcp__connector__fx_echo', 'mcp__connector__fx_regional']))
        await run(claudeBinary(), ['mcp', 'remove', 'connector'], env, workspace)
      },
    )

    it('a JSON mcpServers entry: Claude Code started with it as --mcp-config sees the connector tools', async () => {
      const config = JSON.parse(readmeBlock('bridge-json', 'json'))
      expect(config).toEqual({ mcpServers: { connector: { command: 'tutti', args: ['session', 'bridge'] } } })
      const file = path.join(workspace, 'mcp.json')
      fs.writeFileSync(file, JSON.stringify(config))
      const session = await claudeSession(['--strict-mcp-config', '--mcp-config', file])
      seen.push(session.stdout, session.stderr)
      const init = claudeInit(session.stdout)
      expect(init, session.stdout + session.stderr).toBeDefined()
      expect(init.tools).toEqual(expect.arrayContaining(['mcp__connector__fx_echo']))
    })

    it(
      'Codex: `codex mcp add connector -- tutti session bridge`, ' +
        'then a codex app-server lists the connector tools through it',
      async () => {
        const added = await run('/bin/sh', ['-c', readmeBlock('bridge-codex')], env, workspace)
        expect(added.code, added.stderr).toBe(0)
        expect(fs.readFileSync(path.join(home, '.codex', 'config.toml'), 'utf8')).toMatch(
          /\[mcp_servers\.connector\][\s\S]*command = "tutti"/,
        )
        const codex = await CodexAppServer.start(env, workspace)
        try {
          const status = await eventually(
            async () =>
              (await codex.request('mcpServerStatus/list', { detail: 'toolsAndAuthOnly' })).data.find(
                (s: { name: string }) => s.name === 'connector',
              ),
            (s) => s !== undefined && Object.keys(s.tools ?? {}).length > 0,
          )
          expect(Object.keys(status.tools)).toEqual(expect.arrayContaining(['fx_echo', 'fx_regional']))
        } finally {
          await codex.stop()
          seen.push(codex.stderr.join(''))
        }
      },
    )
  })
})
