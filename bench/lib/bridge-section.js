// Section "bridge": what `tutti session bridge` adds to a tools/call. The
// same daemon and the same connector (examples/connectors/everything, tool
// everything_echo) are reached two ways in each round: directly over HTTP
// with the raw client (the `tutti` row of the call section), and through a
// bridge process over stdio with the same bytes per line. In each round the
// two are called in turn, call by call (alternating which goes first), so a
// slow spell of the machine hits both of a pair; a round's figure is the
// median of the pairs' differences (bridge − direct), the section's the
// median over rounds.
import { spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { LEGACY, MODERN } from './clients.js'
import { processCpuMs } from './cpu.js'
import { REPO, TUTTI_BIN } from './context.js'
import { performance } from 'node:perf_hooks'
import { latencyStats } from './measure.js'
import { medianOf } from './ratios.js'
import { connectRaw, rawEchoCall } from './raw/client.js'
import { initializeFields, notificationBody, requestBody, resultOf } from './raw/jsonrpc.js'
import { prepareSession } from './targets/tutti.js'
import { stopDaemon, tutti } from './tutti-cli.js'
import { withTimeout } from './wait.js'

const EXAMPLE = path.join(REPO, 'examples/connectors/everything')
const TOOL = 'everything_echo'
/** @typedef {{ direct: number, bridge: number, added: number, bridgeCpuMsPerCall: number }} BridgeRound */
/**
 * One era's figures: medians over the rounds, and the spread of the rounds' added latency.
 * @typedef {BridgeRound & { era: string, rounds: BridgeRound[],
 *   spread: import('./measure.js').LatencyStats }} BridgeEra
 */

/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * A bridge process and a raw JSON-RPC client on its stdio: one line out, the
 * answer line with that id back. Same request bytes as the raw HTTP client.
 * @param {import('./context.js').RunContext} ctx
 * @param {string} stateDir
 * @param {string} era
 */
async function connectBridge(ctx, stateDir, era) {
  const { cfg } = ctx
  const child = spawn(process.execPath, [TUTTI_BIN, 'session', 'bridge'], {
    env: ctx.env({ TUTTI_STATE_DIR: stateDir }),
    cwd: ctx.runRoot,
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  /** @type {Map<number, (msg: any) => void>} */
  const pending = new Map()
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const msg = JSON.parse(line)
    const resolve = typeof msg.id === 'number' ? pending.get(msg.id) : undefined
    if (resolve) {
      pending.delete(msg.id)
      resolve(msg)
    }
  })
  const modern = era === MODERN
  let nextId = 1
  /** @param {string} method @param {string} fields */
  const request = async (method, fields) => {
    const id = nextId++
    const answer = new Promise((resolve) => pending.set(id, resolve))
    child.stdin.write(`${requestBody(id, method, fields, modern)}\n`)
    return resultOf(await withTimeout(`bridge ${method}`, cfg.requestTimeoutMs, () => answer), id)
  }
  if (modern) await request('server/discover', '')
  else {
    await request('initialize', initializeFields(LEGACY))
    child.stdin.write(`${notificationBody('notifications/initialized')}\n`)
  }
  return {
    pid: /** @type {number} */ (child.pid),
    request,
    close: async () => {
      child.stdin.end()
      await withTimeout('bridge exit', 15_000, () => exited).catch(() => child.kill('SIGKILL'))
    },
  }
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 */
export async function runBridgeSection(ctx, progress) {
  const { cfg } = ctx
  const t = { ctx, stateDir: ctx.dir('bridge-state') }
  /** @type {{ eras: BridgeEra[], error?: string }} */
  const out = { eras: [] }
  /** @type {Array<{ close: () => Promise<void> }>} */
  const open = []
  try {
    await tutti(t, ['connector', 'install', EXAMPLE])
    await tutti(t, ['connector', 'connect', 'everything', '--from-env', 'EVERYTHING_API_KEY'], {
      EVERYTHING_API_KEY: 'bench',
    })
    const { url, headers } = await prepareSession(t, 'bench-bridge')
    /** @typedef {() => Promise<void>} Call */
    /** @type {{ era: string, direct: Call, bridge: Call, bridgePid: number, rounds: BridgeRound[] }[]} */
    const pairs = []
    for (const era of [LEGACY, MODERN]) {
      const direct = await connectRaw({ transport: 'streamable-http', url, headers }, era, cfg.requestTimeoutMs)
      open.push(direct)
      const bridge = await connectBridge(ctx, t.stateDir, era)
      open.push(bridge)
      pairs.push({
        era,
        direct: rawEchoCall(direct, TOOL),
        bridge: rawEchoCall(/** @type {any} */ (bridge), TOOL),
        bridgePid: bridge.pid,
        rounds: [],
      })
    }
    for (let round = 0; round < cfg.rounds; round++) {
      for (const p of pairs) {
        for (let i = 0; i < cfg.warmup; i++) {
          await p.direct()
          await p.bridge()
        }
        // call by call, alternating which goes first: a slow spell of the machine hits both of a pair
        /** @type {number[]} */
        const direct = []
        /** @type {number[]} */
        const bridge = []
        const cpu0 = processCpuMs(p.bridgePid)
        for (let i = 0; i < cfg.calls; i++) {
          /** @type {('direct' | 'bridge')[]} */
          const order = i % 2 === 0 ? ['direct', 'bridge'] : ['bridge', 'direct']
          for (const which of order) {
            const t0 = performance.now()
            await p[which]()
            ;(which === 'direct' ? direct : bridge).push(performance.now() - t0)
          }
        }
        const cpu1 = processCpuMs(p.bridgePid)
        const added = bridge.map((b, i) => b - direct[i])
        const r = {
          direct: medianOf(direct),
          bridge: medianOf(bridge),
          added: medianOf(added),
          bridgeCpuMsPerCall: cpu0 !== undefined && cpu1 !== undefined ? (cpu1 - cpu0) / cfg.calls : NaN,
        }
        p.rounds.push(r)
        progress(
          `bridge ${p.era} round ${round + 1}/${cfg.rounds}: direct ${r.direct.toFixed(3)} ms, ` +
            `bridge ${r.bridge.toFixed(3)} ms, added (median of pairs) ${r.added.toFixed(3)} ms`,
        )
      }
    }
    for (const p of pairs) {
      /** @param {keyof BridgeRound} k */
      const of = (k) => medianOf(p.rounds.map((r) => r[k]))
      out.eras.push({
        era: p.era,
        direct: of('direct'),
        bridge: of('bridge'),
        added: of('added'),
        bridgeCpuMsPerCall: of('bridgeCpuMsPerCall'),
        rounds: p.rounds,
        spread: latencyStats(p.rounds.map((r) => r.added)),
      })
    }
  } catch (err) {
    out.error = message(err)
    progress(`bridge: FAILED ${out.error}`)
  } finally {
    for (const c of open) await c.close().catch(() => {})
    progress(`bridge: ${await stopDaemon(t)}`)
  }
  return out
}
