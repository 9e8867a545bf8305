#!/usr/bin/env node
// `npm run bench`: builds tutti (the npm script does), then measures every
// figure issue 11 sets a goal for, in one run: tools/call of the same upstream
// (server-everything's echo over stdio) directly, through the floor forwarder,
// tutti in both eras and the peers, interleaved over rounds; tools/list of
// 5,000 tools; a daemon start with 100 connectors; CLI, shim, fork and
// recovery times. Prints one table, writes bench/results/latest.json. See
// bench/README.md.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runAgentStartSection } from './lib/agent-start-section.js'
import { gitHead } from './lib/baseline.js'
import { runBridgeSection } from './lib/bridge-section.js'
import { runCallSection } from './lib/call-section.js'
import { runCliSection } from './lib/cli-section.js'
import { loadConfig } from './lib/config.js'
import { createContext, NODE_MODULES, REPO } from './lib/context.js'
import { runListSection } from './lib/list-section.js'
import { reapLeftovers, RUN_MARKER, stopAll, teardown } from './lib/procs.js'
import { callRatios } from './lib/ratios.js'
import { renderReport } from './lib/report.js'
import { runSessionsMemorySection } from './lib/sessions-memory-section.js'
import { runStartSection } from './lib/start-section.js'
import { runViewsSection } from './lib/views-section.js'

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url))
const startedAt = Date.now()
/** @param {string} line */
const progress = (line) => process.stderr.write(`[bench +${((Date.now() - startedAt) / 1000).toFixed(1)}s] ${line}\n`)

/** @param {string} pkg */
function versionOf(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(NODE_MODULES, pkg, 'package.json'), 'utf8')).version
  } catch {
    return 'missing'
  }
}

function environment() {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    tutti: gitHead(REPO),
    packages: Object.fromEntries(
      [
        '@modelcontextprotocol/client',
        '@modelcontextprotocol/server',
        '@modelcontextprotocol/server-everything',
        'mcp-proxy',
        'supergateway',
        'mcp-hub',
      ].map((p) => [p, versionOf(p)]),
    ),
  }
}

/** @type {import('./lib/context.js').RunContext | undefined} */
let ctx
/** @type {ReturnType<typeof reapLeftovers> | undefined} */
let cleaning
/** Stop every group we spawned, then reap anything of this run that is still alive. */
async function cleanup() {
  cleaning ??= (async () => {
    const stopped = await stopAll()
    for (const s of stopped) progress(`stopped leftover group ${s.name} (${s.pid}): ${s.how}`)
    if (!ctx) return { found: [], survivors: [] }
    const reaped = await reapLeftovers(ctx.runId, ctx.runRoot)
    for (const p of reaped.found) progress(`killed leftover process ${p.pid}: ${p.cmd.slice(0, 160)}`)
    for (const p of reaped.survivors) progress(`STILL ALIVE: ${p.pid}: ${p.cmd.slice(0, 160)}`)
    if (!ctx.cfg.keepTmp) fs.rmSync(ctx.runRoot, { recursive: true, force: true })
    else progress(`kept ${ctx.runRoot}`)
    return reaped
  })()
  return cleaning
}

for (const sig of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.once(sig, () => {
    progress(`${sig}: cleaning up`)
    teardown.started = true
    cleanup().finally(() => process.exit(130))
  })
}

async function main() {
  const cfg = loadConfig()
  ctx = createContext(cfg)
  // whatever the run spawns, directly or through the product (the daemon and its upstreams), carries the marker the
  // reaper looks for
  process.env[RUN_MARKER] = ctx.runId
  progress(
    `run ${ctx.runId} in ${ctx.runRoot}${cfg.quick ? ' (quick mode)' : ''}; load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  )
  /** @type {import('./lib/report.js').Results} */
  const results = {
    startedAt: new Date(startedAt).toISOString(),
    cfg: { ...cfg },
    environment: environment(),
    loadavg: { start: os.loadavg(), end: /** @type {number[] | undefined} */ (undefined) },
  }
  let exitCode = 0
  try {
    if (cfg.sections.includes('call')) {
      const call = await runCallSection(ctx, progress)
      results.call = { ...call, ratios: callRatios(call) }
    }
    if (cfg.sections.includes('list')) results.list = await runListSection(ctx, progress)
    // section start needs section list (config.js); without it, it fails as a harness error
    const list = /** @type {import('./lib/list-section.js').ListSection} */ (results.list)
    if (cfg.sections.includes('start')) results.start = await runStartSection(ctx, list, progress)
    if (cfg.sections.includes('cli')) results.cli = await runCliSection(ctx, progress)
    if (cfg.sections.includes('bridge')) results.bridge = await runBridgeSection(ctx, progress)
    if (cfg.sections.includes('agent-start')) results.agentStart = await runAgentStartSection(ctx, progress)
    if (cfg.sections.includes('sessions-memory')) results.sessionsMemory = await runSessionsMemorySection(ctx, progress)
    if (cfg.sections.includes('views')) results.views = await runViewsSection(ctx, progress)
  } catch (err) {
    progress(`harness error: ${err instanceof Error ? err.stack : err}`)
    results.error = String(err instanceof Error ? err.message : err)
    exitCode = 1
  } finally {
    results.loadavg.end = os.loadavg()
    const reaped = await cleanup()
    results.processes = {
      leftoversKilled: reaped.found.length,
      survivors: reaped.survivors.map((p) => `${p.pid} ${p.cmd}`),
    }
    if (reaped.survivors.length) exitCode = 1
  }
  results.finishedAt = new Date().toISOString()

  const env = results.environment
  const quick = cfg.quick ? ' (QUICK: small counts, not for quoting)' : ''
  const pkgs = env.packages
  const base = cfg.baseline ? ` (baseline ${cfg.baseline.commit} at ${cfg.baseline.dir})` : ''
  const out = [
    `tutti bench ${results.startedAt}${quick}: node ${env.node}, ${env.cpus} × ${env.cpuModel}, ` +
      `tutti ${env.tutti}${base}; ` +
      `mcp-proxy ${pkgs['mcp-proxy']}, supergateway ${pkgs.supergateway}, mcp-hub ${pkgs['mcp-hub']}`,
    '',
    renderReport(results),
  ]
  if (results.error) out.push(`harness error: ${results.error}`)
  const proc = results.processes
  out.push(
    proc.survivors.length
      ? `processes: ${proc.survivors.length} STILL ALIVE after cleanup: ${proc.survivors.join('; ')}`
      : `processes: none left over${proc.leftoversKilled ? ` (${proc.leftoversKilled} killed during cleanup)` : ''}`,
  )
  const text = `${out.join('\n')}\n`
  process.stdout.write(text)
  results.table = text

  fs.mkdirSync(RESULTS_DIR, { recursive: true })
  const file = path.join(RESULTS_DIR, 'latest.json')
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  progress(`wrote ${path.relative(process.cwd(), file)}`)
  return exitCode
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    progress(`fatal: ${err instanceof Error ? err.stack : err}`)
    await cleanup().catch(() => {})
    process.exit(1)
  },
)
