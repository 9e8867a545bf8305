// Section "agent-start": how long the real Claude Code (`claude -p`, against
// the fake Anthropic API) takes from its launch to its first model request,
// with 25 connectors through tutti and without. Rows, in an order rotated by
// one per round and reversed every other round:
//   exec-warm   `tutti session exec --provider claude -- claude -p …`, 25 installed memory connectors, daemon running
//   exec-cold   the same with no daemon running (exec starts it)
//   prepared    claude with a prepared session's --mcp-config/--add-dir and env (what exec adds is left out)
//   prepared-1  the same with a view of one connector (`--connectors mem-00`): nine tools instead of 225
//   plain-25    the same 25 servers in a plain --mcp-config, each a stdio server
//   plain-1     one stdio server of them
//   http-1      one plain HTTP MCP server (server-everything, streamableHttp)
//   none        no MCP server at all: the baseline of every ratio
// Every launch has a fresh HOME; its first model request is checked to name
// the tools its servers have. In each round every row is launched between
// two launches of `none`, and its ratio is its time ÷ the mean of those two
// (a slow spell of the shared machine weighs on both); a row's figure is the
// median over rounds.
import fs from 'node:fs'
import path from 'node:path'
import { agentEnv, claudeBinary, claudeVersion, launchToFirstRequest, toolSearchEnv } from './claude.js'
import { EVERYTHING_ENTRY, TUTTI_BIN } from './context.js'
import { promptText, startFakeAnthropic, toolNames } from './fake-anthropic.js'
import { installMemoryConnectors, MEMORY_TOOLS, plainMcpConfig } from './memory-connectors.js'
import { startPeer } from './peer.js'
import { descendants } from './proc-tree.js'
import { medianOf } from './ratios.js'
import { daemonPid, stopDaemon, tutti } from './tutti-cli.js'
import { freePort, tcpOpen } from './wait.js'

/**
 * @typedef {object} AgentRow
 * @property {string} id
 * @property {string} label
 * @property {number} expectTools       MCP tools the first request should name (-1: any)
 * @property {number[]} ms              per round (NaN when the round failed); for (c) the median of the round's
 * @property {number[]} all             (c) only: every launch
 * @property {number[]} tools           MCP tools named in each first request
 * @property {number} [median]
 * @property {number} [ratio]           median over rounds of ms ÷ the mean of the (c) launches around it
 * @property {number[]} perRound        those ratios
 * @property {string} [error]
 */

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/** MCP tool names (mcp__<server>__<tool>) a model request offers or names in its prompt (tool search defers them). */
function mcpToolsNamed(/** @type {import('./fake-anthropic.js').ModelRequest} */ req) {
  const names = new Set(toolNames(req).filter((n) => n.startsWith('mcp__')))
  for (const m of promptText(req).matchAll(/mcp__[A-Za-z0-9-]+?__[A-Za-z0-9_-]+/g)) names.add(m[0])
  return names.size
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 */
export async function runAgentStartSection(ctx, progress) {
  const { cfg } = ctx
  const n = cfg.agentConnectors
  const out = {
    connectors: n,
    claude: claudeVersion(),
    toolSearch: toolSearchEnv().ENABLE_TOOL_SEARCH ?? "Claude Code's default (on)",
    rows: /** @type {AgentRow[]} */ ([]),
    setup: /** @type {{ installMs?: number, upstreamsAtEnd?: number, httpServer?: string }} */ ({}),
    error: /** @type {string | undefined} */ (undefined),
  }
  const claude = claudeBinary()
  if (!claude) {
    out.error = 'Claude Code is not installed (npm ci installs @anthropic-ai/claude-code)'
    return out
  }
  const label = 'agent-start'
  const t = { ctx, stateDir: ctx.dir('agent-start-state') }
  const workspace = ctx.dir('agent-start-workspace')
  const fake = await startFakeAnthropic(() => ({ text: 'ok' }))
  /** @type {Awaited<ReturnType<typeof startPeer>> | undefined} */
  let http
  try {
    const installed = await installMemoryConnectors(t, n, progress, label)
    out.setup.installMs = installed.installMs
    const port = await freePort()
    http = await startPeer(ctx, {
      name: 'everything-http',
      script: EVERYTHING_ENTRY,
      args: ['streamableHttp'],
      env: { PORT: String(port) },
      ready: () => tcpOpen(port),
    })
    out.setup.httpServer = http.command
    const configs = ctx.dir('agent-start-configs')
    /** @param {string} name @param {unknown} config */
    const write = (name, config) => {
      const file = path.join(configs, `${name}.json`)
      fs.writeFileSync(file, JSON.stringify(config))
      return file
    }
    const all = plainMcpConfig(n, ctx.dir('agent-start-data'))
    const plain25 = write('plain-all', all)
    const [oneKey] = Object.keys(all.mcpServers)
    const plain1 = write('plain-1', { mcpServers: { [oneKey]: all.mcpServers[oneKey] } })
    const http1 = write('http-1', { mcpServers: { everything: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } } })
    await tutti(t, ['daemon', 'start'])

    const claudeArgs = (/** @type {string} */ marker) => ['-p', `${marker}: say ok`, '--strict-mcp-config']
    /**
     * Claude Code started with a prepared session's flags and env, prepared anew (untimed) before each launch:
     * the cold row's `daemon stop` revokes every token.
     * @param {string} marker @param {NodeJS.ProcessEnv} env @param {string} session @param {string[]} [view]
     */
    const prepared = async (marker, env, session, view = []) => {
      const rt = await tutti(t, [
        'session',
        'prepare',
        '--provider',
        'claude',
        '--workspace',
        workspace,
        '--session',
        session,
        ...view,
      ])
      return {
        command: claude,
        args: [...rt.projection.args, ...claudeArgs(marker)],
        env: { ...env, PATH: rt.env.PATH, TUTTI_CONNECTOR_TOKEN: rt.env.TUTTI_CONNECTOR_TOKEN },
      }
    }
    /** @type {Array<{ id: string, label: string, expectTools: number, before?: () => Promise<unknown>,
     *   launch: (marker: string, env: NodeJS.ProcessEnv) => Promise<{ command: string, args: string[],
     *   env: NodeJS.ProcessEnv }> }>} */
    const defs = [
      {
        id: 'exec-warm',
        label: `tutti session exec, ${n} connectors, warm daemon (a)`,
        expectTools: n * MEMORY_TOOLS,
        before: () => tutti(t, ['daemon', 'start']),
        launch: async (marker, env) => ({
          command: process.execPath,
          args: [TUTTI_BIN, 'session', 'exec', '--provider', 'claude', '--', claude, ...claudeArgs(marker)],
          env: { ...env, TUTTI_STATE_DIR: t.stateDir },
        }),
      },
      {
        id: 'exec-cold',
        label: `tutti session exec, ${n} connectors, no daemon running`,
        expectTools: n * MEMORY_TOOLS,
        before: () => stopDaemon(t),
        launch: async (marker, env) => ({
          command: process.execPath,
          args: [TUTTI_BIN, 'session', 'exec', '--provider', 'claude', '--', claude, ...claudeArgs(marker)],
          env: { ...env, TUTTI_STATE_DIR: t.stateDir },
        }),
      },
      {
        id: 'prepared',
        label: `prepared session (its flags and env), ${n} connectors`,
        expectTools: n * MEMORY_TOOLS,
        launch: (marker, env) => prepared(marker, env, 'bench-agent-prepared'),
      },
      {
        id: 'prepared-1',
        label: 'prepared session with a view of 1 connector (--connectors)',
        expectTools: MEMORY_TOOLS,
        launch: (marker, env) => prepared(marker, env, 'bench-agent-prepared-1', ['--connectors', installed.keys[0]]),
      },
      {
        id: 'plain-all',
        label: `plain --mcp-config, the ${n} servers over stdio (b)`,
        expectTools: n * MEMORY_TOOLS,
        launch: async (marker, env) => ({
          command: claude,
          args: ['--mcp-config', plain25, ...claudeArgs(marker)],
          env,
        }),
      },
      {
        id: 'plain-1',
        label: 'plain --mcp-config, 1 stdio server (server-memory)',
        expectTools: MEMORY_TOOLS,
        launch: async (marker, env) => ({
          command: claude,
          args: ['--mcp-config', plain1, ...claudeArgs(marker)],
          env,
        }),
      },
      {
        id: 'http-1',
        label: 'plain --mcp-config, 1 HTTP server (server-everything)',
        expectTools: -1,
        launch: async (marker, env) => ({ command: claude, args: ['--mcp-config', http1, ...claudeArgs(marker)], env }),
      },
      {
        id: 'none',
        label: 'no MCP servers (c)',
        expectTools: 0,
        launch: async (marker, env) => ({ command: claude, args: claudeArgs(marker), env }),
      },
    ]
    out.rows = defs.map((d) => ({
      id: d.id,
      label: d.label,
      expectTools: d.expectTools,
      ms: [],
      tools: [],
      perRound: [],
      all: [],
    }))

    /** One launch of a row: its ms to the first model request (NaN when it failed). */
    const launch = async (/** @type {(typeof defs)[number]} */ def, /** @type {number} */ r, tag = '') => {
      const row = /** @type {AgentRow} */ (out.rows.find((x) => x.id === def.id))
      const marker = `bench-agent-start-r${r + 1}-${def.id}${tag}`
      const home = ctx.dir(`agent-homes/${marker}`)
      try {
        await def.before?.()
        const spec = await def.launch(marker, agentEnv(ctx, { home, origin: fake.origin }))
        const run = await launchToFirstRequest(ctx, fake, { name: marker, ...spec, cwd: workspace, marker })
        const tools = mcpToolsNamed(run.request)
        const end = await run.finish()
        row.tools.push(tools)
        progress(
          `${label} r${r + 1} ${def.id}${tag}: ${run.ms.toFixed(0)} ms to the first model request, ${tools} MCP ` +
            `tools named; ${end.exit} ${end.exitedAfterMs.toFixed(0)} ms later`,
        )
        return run.ms
      } catch (err) {
        row.error = `round ${r + 1}: ${message(err)}`
        progress(`${label} r${r + 1} ${def.id}${tag}: FAILED ${row.error}`)
        return NaN
      } finally {
        fs.rmSync(home, { recursive: true, force: true })
      }
    }
    const noneDef = /** @type {(typeof defs)[number]} */ (defs.find((d) => d.id === 'none'))
    const none = /** @type {AgentRow} */ (out.rows.find((x) => x.id === 'none'))
    const rowDefs = defs.filter((d) => d !== noneDef)
    // every row is launched between two launches of (c), so a slow spell of the shared machine weighs on its
    // baseline too: its ratio is its time ÷ the mean of those two
    for (let r = 0; r < cfg.agentRounds; r++) {
      const rotated = rowDefs.map((_, i) => rowDefs[(i + r) % rowDefs.length])
      const order = r % 2 ? rotated.reverse() : rotated
      const baselines = [await launch(noneDef, r, '-0')]
      for (const [i, def] of order.entries()) {
        const row = /** @type {AgentRow} */ (out.rows.find((x) => x.id === def.id))
        row.ms[r] = await launch(def, r)
        baselines.push(await launch(noneDef, r, `-${i + 1}`))
        const around = baselines.slice(-2).filter((v) => Number.isFinite(v))
        row.perRound[r] = row.ms[r] / (around.reduce((a, v) => a + v, 0) / around.length)
      }
      none.ms[r] = medianOf(baselines)
      none.all.push(...baselines)
      none.perRound[r] = 1
    }
    const pid = daemonPid(t.stateDir)
    // lazy by cache: no launch made a tool call, so the daemon should have started no upstream
    if (pid !== undefined) out.setup.upstreamsAtEnd = descendants(pid).length
    for (const row of out.rows) {
      row.median = medianOf(row.id === 'none' ? row.all : row.ms)
      row.ratio = medianOf(row.perRound)
    }
  } catch (err) {
    out.error = message(err)
    progress(`${label}: FAILED ${out.error}`)
  } finally {
    await fake.close()
    if (http) progress(`${label}: ${await http.stop()}`)
    progress(`${label}: ${await stopDaemon(t)}`)
  }
  return out
}
