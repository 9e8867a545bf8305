import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { modernClient, type Binding } from '../support/mcp-clients.js'
import { cleanupState, REPO, snapshotTree, tempStateDir, tutti, tuttiJson } from '../support/tutti.js'

/*
 * `install --from <client>`: config files in each client's documented format, written into a temp
 * HOME and a temp project, become connectors; the stdio ones run the real server-memory from npm
 * and answer through the daemon. Literal secrets go to the 0600 store and nowhere else.
 */
const MEMORY = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js')
const GITHUB_SECRET = 'ghp_importedLiteralSecret0123456789'
const GEMINI_SECRET = 'gemini-literal-header-secret-456'
const stdio = (extra: Record<string, unknown> = {}) => ({ command: 'node', args: [MEMORY], ...extra })

describe('install --from: existing client configs', () => {
  let root: string
  let home: string
  let project: string
  let dir: string
  let env: NodeJS.ProcessEnv
  const write = (file: string, content: unknown) => {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  }
  const run = (args: string[], input?: string) =>
    tutti(dir, ['connector', 'install', ...args], { env, ...(input !== undefined ? { input } : {}) })
  const dryRun = async (client: string) => {
    const out = await run(['--from', client, '--project', project, '--dry-run', '--json'])
    expect(out.stderr).toBe('')
    return JSON.parse(out.stdout)
  }
  const byName = (report: { entries: Array<{ name: string }> }) =>
    Object.fromEntries(report.entries.map((e) => [e.name, e])) as Record<string, any>

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-import-'))
    home = path.join(root, 'home')
    project = path.join(root, 'project')
    fs.mkdirSync(project, { recursive: true })
    dir = tempStateDir('import')
    env = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), CODEX_HOME: path.join(home, 'codex-home') }
    // Claude Code: user and local scopes in ~/.claude.json, the shared one in .mcp.json
    write(path.join(home, '.claude.json'), {
      numStartups: 3,
      mcpServers: {
        'mem-user': stdio({ env: { GITHUB_TOKEN: GITHUB_SECRET, LOG_LEVEL: 'debug' } }),
        legacy: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
      },
      projects: {
        [project]: {
          mcpServers: { notes: { type: 'stdio', ...stdio(), timeout: 5000 } },
          disabledMcpjsonServers: ['turned-down'],
        },
      },
    })
    write(path.join(project, '.mcp.json'), {
      mcpServers: {
        shared: stdio({ env: { API_KEY: '${API_KEY}' } }),
        notes: stdio({ args: ['shadowed'] }),
        'turned-down': stdio(),
      },
    })
    write(path.join(home, '.config', 'Claude', 'claude_desktop_config.json'), { mcpServers: { desktop: stdio() } })
    write(
      path.join(home, 'codex-home', 'config.toml'),
      [
        '[mcp_servers.codex_mem]',
        'command = "node"',
        `args = [${JSON.stringify(MEMORY)}]`,
        'env_vars = ["SOME_TOKEN"]',
        'tool_timeout_sec = 900',
        '',
        '[mcp_servers.off]',
        'command = "node"',
        'enabled = false',
        '',
        '[mcp_servers.broken]',
        'args = ["no command and no url"]',
        '',
      ].join('\n'),
    )
    write(path.join(home, '.cursor', 'mcp.json'), {
      mcpServers: {
        'cursor-remote': {
          url: 'https://mcp.example.test/mcp',
          headers: { Authorization: 'Bearer ${env:CURSOR_TOKEN}' },
        },
      },
    })
    write(path.join(project, '.cursor', 'mcp.json'), {
      mcpServers: { 'cursor-mem': stdio({ env: { NOTES_DIR: '${workspaceFolder}/notes' } }) },
    })
    write(path.join(project, '.vscode', 'mcp.json'), {
      inputs: [
        { type: 'promptString', id: 'mem-key', description: 'The memory key', password: true },
        { type: 'promptString', id: 'region' },
      ],
      servers: {
        'vscode-mem': {
          type: 'stdio',
          ...stdio({ env: { MEM_KEY: '${input:mem-key}', REGION: '${input:region}' } }),
          envFile: '${workspaceFolder}/.env',
        },
      },
    })
    write(path.join(home, '.gemini', 'settings.json'), {
      mcpServers: {
        'gemini-remote': {
          httpUrl: 'https://gemini.example.test/mcp',
          headers: { 'X-Api-Key': GEMINI_SECRET },
          trust: true,
          timeout: 30000,
        },
      },
    })
  })
  afterAll(async () => {
    await cleanupState(dir)
    fs.rmSync(root, { recursive: true, force: true })
  })

  it(
    'the dry run of each client lists what would be installed, ' +
      'what is skipped and why, and changes nothing on disk',
    async () => {
      const before = { state: snapshotTree(dir), home: snapshotTree(home), project: snapshotTree(project) }
      const claude = byName(await dryRun('claude'))
      expect(claude['mem-user']).toMatchObject({
        outcome: 'would install',
        key: 'mem-user',
        storedCredentials: ['GITHUB_TOKEN'],
        needs: [],
      })
      // the literal secret is a declared credential, the literal non-secret a setting's value
      expect(claude['mem-user'].manifest).toMatchObject({
        auth: { kind: 'env', variables: [{ name: 'GITHUB_TOKEN', secret: true }] },
        config: [{ name: 'LOG_LEVEL', default: 'debug' }],
        mcp: { env: { GITHUB_TOKEN: '${GITHUB_TOKEN}', LOG_LEVEL: '${LOG_LEVEL}' } },
      })
      expect(claude.shared).toMatchObject({ outcome: 'would install', needs: ['API_KEY'] })
      // the local scope shadows the project's .mcp.json; a server turned down in Claude Code stays off
      expect(claude.notes).toMatchObject({
        outcome: 'would install',
        origin: expect.stringContaining('local'),
        skipped: [expect.stringContaining('"timeout"')],
      })
      expect(claude.notes.manifest.mcp.args).toEqual([MEMORY])
      expect(claude['turned-down']).toMatchObject({
        outcome: 'not imported',
        reason: expect.stringContaining('disabled'),
      })
      expect(claude.legacy).toMatchObject({ outcome: 'failed', reason: expect.stringContaining('SSE') })
      expect(byName(await dryRun('claude-desktop')).desktop).toMatchObject({ outcome: 'would install', key: 'desktop' })
      const codex = byName(await dryRun('codex'))
      // Codex's own call bound is carried, within tutti's limit
      expect(codex.codex_mem).toMatchObject({
        outcome: 'would install',
        key: 'codex-mem',
        needs: ['SOME_TOKEN'],
        skipped: [],
      })
      expect(codex.codex_mem.manifest.mcp.timeouts).toEqual({ toolCallSeconds: 900 })
      expect(codex.off).toMatchObject({ outcome: 'not imported', reason: expect.stringContaining('enabled = false') })
      expect(codex.broken.outcome).toBe('failed')
      const cursor = byName(await dryRun('cursor'))
      expect(cursor['cursor-remote'].manifest).toMatchObject({
        auth: { variables: [{ name: 'CURSOR_TOKEN', secret: true }] },
        mcp: { transport: 'http', headers: { Authorization: 'Bearer ${CURSOR_TOKEN}' } },
      })
      expect(cursor['cursor-mem'].manifest.config).toEqual([{ name: 'NOTES_DIR', default: `${project}/notes` }])
      const vscode = byName(await dryRun('vscode'))['vscode-mem']
      expect(vscode.manifest).toMatchObject({
        auth: { variables: [{ name: 'MEM_KEY', secret: true, description: 'The memory key' }] },
        config: [{ name: 'REGION' }],
      })
      expect(vscode.skipped).toEqual([expect.stringContaining('"envFile"')])
      const gemini = byName(await dryRun('gemini'))['gemini-remote']
      expect(gemini.manifest).toMatchObject({
        mcp: { transport: 'http', url: 'https://gemini.example.test/mcp', headers: { 'X-Api-Key': '${X_API_KEY}' } },
      })
      // Gemini's request timeout (ms) is the tool-call timeout
      expect(gemini.manifest.mcp.timeouts).toEqual({ toolCallSeconds: 30 })
      expect(gemini).toMatchObject({ storedCredentials: ['X_API_KEY'], skipped: [expect.stringContaining('"trust"')] })
      const human = await run(['--from', 'claude', '--project', project, '--dry-run'])
      expect(human.stdout).toContain('would install mem-user')
      expect(human.stdout).toContain('credentials from the config: GITHUB_TOKEN')
      expect(human.stdout).toContain('dry run: nothing was installed or stored')
      for (const out of [human.stdout, human.stderr, JSON.stringify(claude), JSON.stringify(gemini)]) {
        expect(out).not.toContain(GITHUB_SECRET)
        expect(out).not.toContain(GEMINI_SECRET)
      }
      expect({ state: snapshotTree(dir), home: snapshotTree(home), project: snapshotTree(project) }).toEqual(before)
    },
  )

  it(
    'imports the servers of Claude Code as connectors that answer through the daemon; ' +
      'a literal secret is only in the 0600 store',
    async () => {
      const out = await run(['--from', 'claude', '--project', project, '--json'])
      // "legacy" (SSE) cannot be imported: the others are, and the exit code says not all were
      expect(out.code, out.stderr).toBe(1)
      const report = byName(JSON.parse(out.stdout))
      expect(report['mem-user']).toMatchObject({
        outcome: 'installed',
        storedCredentials: ['GITHUB_TOKEN'],
        state: { status: 'ready' },
      })
      expect(report.notes).toMatchObject({ outcome: 'installed', state: { status: 'ready' } })
      expect(report.shared).toMatchObject({ outcome: 'installed', state: { status: 'needs-auth' }, needs: ['API_KEY'] })
      expect(report.legacy.outcome).toBe('failed')
      const credentials = path.join(dir, 'credentials.json')
      expect(fs.statSync(credentials).mode & 0o777).toBe(0o600)
      expect(JSON.parse(fs.readFileSync(credentials, 'utf8')).connectors['mem-user']).toEqual({
        GITHUB_TOKEN: GITHUB_SECRET,
      })
      const leaks = Object.entries(snapshotTree(dir)).filter(
        ([file, content]) => file !== 'credentials.json' && content.includes(GITHUB_SECRET),
      )
      expect(leaks.map(([file]) => file)).toEqual([])
      expect(out.stdout + out.stderr).not.toContain(GITHUB_SECRET)
      // the source says where it came from
      expect(JSON.parse(fs.readFileSync(path.join(dir, 'installed.json'), 'utf8')).connectors.notes.source).toEqual({
        kind: 'Claude Code config',
        name: 'notes',
      })
      const binding: Binding = (
        await tuttiJson(
          dir,
          ['session', 'prepare', '--provider', 'codex', '--workspace', 'ws', '--session', 'import'],
          {
            env,
          },
        )
      ).mcpServers[0]
      const client = await modernClient(binding)
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(['mem-user_read_graph', 'notes_read_graph']))
      const graph = await client.callTool({ name: 'notes_read_graph', arguments: {} })
      expect(JSON.parse((graph.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ entities: [] })
      await client.close()
      // the same config again: each server is already installed, and nothing fails with --only
      const again = await run(['--from', 'claude', '--project', project, '--only', 'mem-user,notes'])
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout).toMatch(/already installed mem-user 0\.0\.0 \(ready\)/)
      expect(again.stdout).toMatch(/already installed notes 0\.0\.0 \(ready\)/)
    },
  )

  it(
    'one bad entry does not stop the others; ' +
      'a config file given as the source and --json-entry are read as configs',
    async () => {
      const codex = await run(['--from', 'codex', '--project', project, '--json'])
      expect(codex.code).toBe(1)
      const entries = byName(JSON.parse(codex.stdout))
      expect(entries.codex_mem).toMatchObject({
        outcome: 'installed',
        key: 'codex-mem',
        state: { status: 'needs-auth' },
      })
      expect(entries.broken).toMatchObject({
        outcome: 'failed',
        reason: expect.stringMatching(/stdio server|remote one/),
      })
      // a bare .mcp.json is an MCP config, not a server.json
      const file = await run([path.join(project, '.mcp.json'), '--only', 'shared', '--dry-run', '--json'])
      expect(file.code, file.stderr).toBe(0)
      expect(JSON.parse(file.stdout)).toMatchObject({
        kind: 'Claude Code config',
        entries: [{ name: 'shared', outcome: 'would install' }],
      })
      const entry = await run(['--json-entry', '-', '--key', 'piped', '--json'], JSON.stringify(stdio()))
      expect(entry.code, entry.stderr).toBe(0)
      expect(JSON.parse(entry.stdout).entries).toEqual([
        expect.objectContaining({
          key: 'piped',
          outcome: 'installed',
          state: expect.objectContaining({ status: 'ready' }),
        }),
      ])
      // bad input is refused with the state as it was
      const before = snapshotTree(dir)
      const unknown = await run(['--from', 'codex', '--project', project, '--only', 'nope'])
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toContain('no server "nope"')
      const badClient = await run(['--from', 'emacs'])
      expect(badClient.code).toBe(2)
      expect(snapshotTree(dir)).toEqual(before)
    },
  )
})
