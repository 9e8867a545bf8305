// Section "views": what a per-session view costs tools/list and tools/call.
// One daemon with 20 fixture connectors × 20 tools (many-tools-server, whose
// tools echo their message) and three kinds of 100 sessions each, prepared
// with the library's prepareRuntime:
//   whole    no view: every connector (today's figures)
//   subset   each a different view: bench-000 and 9 of the other 19 (`connectors`), half the tools
//   shared   one view naming all 20 connectors, the same for every session (as a workspace's project file
//            gives every session of it): the view is applied, the list is whole
// Requests are 2026-07-28 (stateless) over one keep-alive pool, each as the
// next session of its kind in turn. Each round has four phases (sequential
// lists, lists with 16 in flight, sequential calls, calls with 16 in flight);
// in each the kinds take turns, call by call or burst by burst (interleave.js),
// their order rotated by one per round. Ratios are per round against `whole`,
// then medians.
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { connectorKey, generateConnectors } from '../fixtures/generate-connectors.js'
import { REPO } from './context.js'
import { processCpuMs } from './cpu.js'
import { pool } from './list-section.js'
import { interleavedBursts, interleavedMedians } from './interleave.js'
import { sequentialLatency, throughput } from './measure.js'
import { sessionPool } from './raw/sessions.js'
import { medianOf } from './ratios.js'
import { daemonPid, stopDaemon, tutti } from './tutti-cli.js'
import { pollUntil } from './wait.js'

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()
const PHASES = /** @type {const} */ (['listMedian', 'listPerSec', 'callMedian', 'callPerSec'])

/** A deterministic generator (mulberry32), so every run prepares the same views. @param {number} seed */
function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `count` different views of `keys`: keys[0] and half of the others. @param {string[]} keys @param {number} count */
function differentViews(keys, count) {
  const next = random(23)
  const others = keys.slice(1)
  const half = Math.floor(others.length / 2)
  const seen = new Set()
  const views = []
  for (let tries = 0; views.length < count && tries < count * 100; tries++) {
    const pick = [...others].sort(() => next() - 0.5).slice(0, half)
    const view = [keys[0], ...pick.sort()]
    if (seen.has(view.join())) continue
    seen.add(view.join())
    views.push(view)
  }
  return views
}

/**
 * @typedef {object} ViewKind
 * @property {'whole' | 'subset' | 'shared'} id
 * @property {string} label
 * @property {number[]} sessions        indexes into the pool's sessions
 * @property {number} tools             tools each of its sessions lists (subset: the median)
 * @property {Record<typeof PHASES[number], number[]>} rounds
 * @property {{ list: number[], call: number[] }} cpu   daemon CPU ms per request, per round
 * @property {number} [firstListMs]     median of each session's first tools/list (its view's first use)
 */

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 */
export async function runViewsSection(ctx, progress) {
  const { cfg } = ctx
  const label = 'views'
  const n = cfg.viewConnectors
  const perKind = cfg.viewSessions
  const out = {
    connectors: n,
    toolsPerConnector: cfg.viewTools,
    sessionsPerKind: perKind,
    kinds: /** @type {ViewKind[]} */ ([]),
    ratios: /** @type {Record<string, { perRound: number[], median: number }>} */ ({}),
    setup: /** @type {{ installMs?: number, prepareMs?: number }} */ ({}),
    error: /** @type {string | undefined} */ (undefined),
  }
  const t = { ctx, stateDir: ctx.dir('views-state') }
  /** @type {ReturnType<typeof sessionPool> | undefined} */
  let sp
  try {
    const made = generateConnectors({ outDir: ctx.dir('views-connectors'), count: n, tools: cfg.viewTools })
    const keys = made.map((m) => m.key)
    const t0 = performance.now()
    await pool(made, cfg.installConcurrency, ({ dir }) => tutti(t, ['connector', 'install', dir]))
    out.setup.installMs = performance.now() - t0
    progress(
      `${label}: ${n} connectors × ${cfg.viewTools} tools installed in ${(out.setup.installMs / 1000).toFixed(1)} s`,
    )

    const lib = await import(pathToFileURL(path.join(REPO, 'dist/index.js')).href)
    const subsets = differentViews(keys, perKind)
    if (subsets.length < perKind) throw new Error(`only ${subsets.length} different views of ${n} connectors`)
    /** @type {Array<{ kind: ViewKind['id'], connectors?: string[] }>} */
    const specs = []
    for (let i = 0; i < perKind; i++) specs.push({ kind: 'whole' })
    for (const v of subsets) specs.push({ kind: 'subset', connectors: v })
    for (let i = 0; i < perKind; i++) specs.push({ kind: 'shared', connectors: keys })
    const workspace = ctx.dir('views-workspace')
    const env = { PATH: process.env.PATH, HOME: ctx.dir('views-home') }
    const t1 = performance.now()
    /** @type {{ url: string, headers: Record<string, string> }[]} */
    const bindings = new Array(specs.length)
    await pool(
      specs.map((s, i) => ({ s, i })),
      4,
      async ({ s, i }) => {
        const rt = await lib.prepareRuntime({
          provider: 'claude',
          workspace,
          session: `bench-view-${i}`,
          stateDir: t.stateDir,
          env,
          parentToken: null,
          ...(s.connectors ? { connectors: s.connectors } : {}),
        })
        bindings[i] = rt.mcpServers[0]
      },
    )
    out.setup.prepareMs = performance.now() - t1
    progress(`${label}: ${specs.length} sessions prepared in ${(out.setup.prepareMs / 1000).toFixed(1)} s`)
    sp = sessionPool(
      bindings[0].url,
      bindings.map((b) => b.headers),
      cfg.requestTimeoutMs,
    )
    const client = sp
    const expected = specs.map((s) => (s.connectors ? s.connectors.length : n) * cfg.viewTools)
    /** @param {ViewKind['id']} id @param {string} text */
    const kind = (id, text) => {
      const sessions = specs.flatMap((s, i) => (s.kind === id ? [i] : []))
      /** @type {ViewKind} */
      const k = {
        id,
        label: text,
        sessions,
        tools: medianOf(sessions.map((i) => expected[i])),
        cpu: { list: [], call: [] },
        rounds: { listMedian: [], listPerSec: [], callMedian: [], callPerSec: [] },
      }
      return k
    }
    out.kinds = [
      kind('whole', `no view`),
      kind('subset', `${perKind} different views (${Math.floor((n - 1) / 2) + 1} of ${n} connectors)`),
      kind('shared', `${perKind} sessions of one view naming all ${n} connectors`),
    ]
    const tool = `${connectorKey(0)}_tool-00`
    const toolJson = JSON.stringify(tool)
    /** @param {ViewKind} k */
    const listCall = (k) => {
      let i = 0
      return async () => {
        const s = k.sessions[i++ % k.sessions.length]
        const t2 = performance.now()
        const { result, receivedAt } = await client.request(s, 'tools/list', '')
        const got = result.tools?.length
        if (got !== expected[s] || result.nextCursor)
          throw new Error(
            `session ${s} listed ${got} tools${result.nextCursor ? ' and a next page' : ''}, ` +
              `expected ${expected[s]}`,
          )
        return { latencyMs: receivedAt - t2 }
      }
    }
    /** @param {ViewKind} k */
    const echoCall = (k) => {
      let i = 0
      return async () => {
        const s = k.sessions[i++ % k.sessions.length]
        const text = `view ${i}`
        const { result } = await client.request(
          s,
          'tools/call',
          `"name":${toolJson},"arguments":{"message":${JSON.stringify(text)}}`,
          tool,
        )
        if (result.isError || result.content?.[0]?.text !== text)
          throw new Error(`session ${s}: unexpected ${tool} result ${JSON.stringify(result).slice(0, 200)}`)
      }
    }
    // every upstream listed (each install waited for its first start), then each session's first list and call
    await pollUntil(`${label}: ${n * cfg.viewTools} tools listed`, 120_000, async () => {
      const { result } = await client.request(out.kinds[0].sessions[0], 'tools/list', '')
      return result.tools?.length === n * cfg.viewTools
    })
    const budgetMs = cfg.measureBudgetMs
    for (const k of out.kinds) {
      const first = await sequentialLatency(listCall(k), {
        warmup: 0,
        count: k.sessions.length,
        budgetMs,
        what: `${k.id} first tools/list`,
      })
      k.firstListMs = first.median
      await sequentialLatency(echoCall(k), { warmup: k.sessions.length, count: 0, budgetMs, what: `${k.id} warm-up` })
      await throughput(echoCall(k), { total: cfg.roundWarmup, concurrency: cfg.concurrency, budgetMs })
    }
    const daemon = daemonPid(t.stateDir)
    const cpuMs = () => (daemon === undefined ? undefined : processCpuMs(daemon))
    const { concurrency, bursts: parts } = cfg
    for (let r = 0; r < cfg.rounds; r++) {
      const rotated = out.kinds.map((_, i) => out.kinds[(i + r) % out.kinds.length])
      const order = r % 2 ? rotated.reverse() : rotated
      const lists = order.map(listCall)
      const calls = order.map(echoCall)
      const listMedians = await interleavedMedians(lists, { warmup: 0, count: cfg.viewListCalls, budgetMs })
      const listBursts = await interleavedBursts(lists, {
        total: cfg.viewListBurst,
        parts,
        concurrency,
        budgetMs,
        cpuMs,
      })
      const callMedians = await interleavedMedians(calls, { warmup: cfg.warmup, count: cfg.calls, budgetMs })
      const callBursts = await interleavedBursts(calls, {
        total: cfg.concurrentCalls,
        parts,
        concurrency,
        budgetMs,
        cpuMs,
      })
      order.forEach((k, i) => {
        k.rounds.listMedian[r] = listMedians[i]
        k.rounds.listPerSec[r] = listBursts[i].perSec
        k.cpu.list[r] = listBursts[i].cpuPerCall
        k.rounds.callMedian[r] = callMedians[i]
        k.rounds.callPerSec[r] = callBursts[i].perSec
        k.cpu.call[r] = callBursts[i].cpuPerCall
      })
      progress(
        `${label} r${r + 1}: ${out.kinds
          .map(
            (k) =>
              `${k.id} list ${k.rounds.listMedian[r]?.toFixed(2)} ms ` +
              `${k.rounds.listPerSec[r]?.toFixed(0)}/s, call ${k.rounds.callMedian[r]?.toFixed(2)} ms ` +
              `${k.rounds.callPerSec[r]?.toFixed(0)}/s`,
          )
          .join('; ')}`,
      )
    }
    const whole = out.kinds[0]
    for (const k of out.kinds.slice(1))
      for (const p of PHASES) {
        const perRound = k.rounds[p].map((v, i) => v / whole.rounds[p][i])
        out.ratios[`${k.id} ${p}`] = { perRound, median: medianOf(perRound) }
      }
  } catch (err) {
    out.error = message(err)
    progress(`${label}: FAILED ${out.error}`)
  } finally {
    sp?.close()
    progress(`${label}: ${await stopDaemon(t)}`)
  }
  return out
}
