// Section "start": `tutti daemon start` with the connectors section "list"
// installed (100 stdio connectors, no declared tools). That section's daemon
// has already run them and listed their tools, so a daemon that keeps the
// last tools/list of each release ("lazy by cache") can publish every route
// from the cache and start no process. Each round: start (timed until the
// CLI returns, i.e. the start-up reconcile is done), read the daemon's RSS
// and its processes, then time until the whole tool list is served, count the
// processes again, stop. Figures are medians over BENCH_START_ROUNDS.
import { performance } from 'node:perf_hooks'
import { MODERN } from './clients.js'
import { descendants, rssKb } from './proc-tree.js'
import { connectRaw, rawListTools } from './raw/client.js'
import { medianOf } from './ratios.js'
import { daemonPid, stopDaemon, tutti } from './tutti-cli.js'
import { pollUntil } from './wait.js'
import { prepareSession } from './targets/tutti.js'

/**
 * @typedef {object} StartRound
 * @property {number} [readyMs]          `tutti daemon start` wall time
 * @property {number} [daemonRssMb]      at ready
 * @property {number} [processes]        descendants of the daemon at ready
 * @property {number} [processesRssMb]   their RSS, summed
 * @property {number} [running]          connectors whose upstream the status calls running
 * @property {number} [ready]            connectors with status ready
 * @property {number} [listedMs]         from the start until tools/list returned every tool
 * @property {number} [processesAfterList]
 * @property {string} [error]
 */

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()
/** @param {number} kb */
const mb = (kb) => kb / 1024

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {import('./list-section.js').ListSection} list
 * @param {(line: string) => void} progress
 */
export async function runStartSection(ctx, list, progress) {
  const { cfg } = ctx
  const total = list.connectors * list.toolsPerConnector
  const out = {
    connectors: list.connectors,
    rounds: /** @type {StartRound[]} */ ([]),
    summary: /** @type {Record<string, number>} */ ({}),
    error: /** @type {string | undefined} */ (undefined),
  }
  if (!list.stateDir || list.setup.installMs === undefined || list.setup.readyMs === undefined) {
    out.error = `the connectors were not installed and listed (${list.setup.error ?? 'list section incomplete'})`
    return out
  }
  const t = { ctx, stateDir: list.stateDir }
  for (let r = 0; r < cfg.startRounds; r++) {
    /** @type {StartRound} */
    const round = {}
    out.rounds.push(round)
    let conn
    try {
      const t0 = performance.now()
      const status = await tutti(t, ['daemon', 'start'], {}, 300_000)
      round.readyMs = performance.now() - t0
      const pid = Number(status?.pid ?? daemonPid(t.stateDir))
      const kids = descendants(pid)
      round.daemonRssMb = mb(rssKb(pid))
      round.processes = kids.length
      round.processesRssMb = mb(kids.reduce((sum, p) => sum + rssKb(p), 0))
      /** @type {{ upstream?: string, status?: string }[]} */
      const states = Array.isArray(status?.connectors) ? status.connectors : []
      round.running = states.filter((c) => c.upstream === 'running').length
      round.ready = states.filter((c) => c.status === 'ready').length
      // a session costs a CLI call; it is part of "until every tool is served" on purpose (an agent needs one too)
      const { url, headers } = await prepareSession(t, `bench-start-${r}`)
      const c = (conn = await connectRaw({ transport: 'streamable-http', url, headers }, MODERN, cfg.requestTimeoutMs))
      await pollUntil(
        `all ${total} tools listed after start`,
        300_000,
        async () => (await rawListTools(c)).length === total,
        { intervalMs: 50 },
      )
      round.listedMs = performance.now() - t0
      round.processesAfterList = descendants(pid).length
      progress(
        `daemon start ${r + 1}/${cfg.startRounds}: ready ${round.readyMs.toFixed(0)} ms, ` +
          `${round.daemonRssMb.toFixed(0)} MB, ${round.processes} processes (${round.processesRssMb.toFixed(0)} MB); ` +
          `all tools listed at ${round.listedMs.toFixed(0)} ms`,
      )
    } catch (err) {
      round.error = message(err)
      progress(`daemon start ${r + 1}: FAILED ${round.error}`)
    } finally {
      await conn?.close().catch(() => {})
      progress(`daemon start ${r + 1}: ${await stopDaemon(t)}`)
    }
  }
  const ok = out.rounds.filter((x) => !x.error)
  const fields = /** @type {const} */ ([
    'readyMs',
    'daemonRssMb',
    'processes',
    'processesRssMb',
    'running',
    'ready',
    'listedMs',
    'processesAfterList',
  ])
  for (const f of fields) out.summary[f] = medianOf(ok.map((x) => x[f]))
  if (!ok.length) out.error = out.rounds.find((x) => x.error)?.error
  return out
}
