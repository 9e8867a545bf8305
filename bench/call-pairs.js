// Standalone: tools/call daemon CPU of this build against a baseline build,
// over fresh pairs of daemons. Section call keeps one daemon of each build
// for all its rounds; over five runs against 1985a7a its CPU ratio for issue
// 24's tree moved between 1.00x and 1.12x. Here each pair is started anew
// (the first to start alternating) with the example `everything` connector,
// warmed up with 2,000 calls each, and measured in blocks of calls taken in
// turn; the figure is the geometric mean over pairs of each pair's median
// block ratio. Run it against itself (PAIRS_SAME=1) first: at 8672c0b that
// gave 1.05x (pairs 1.02x-1.08x), so a ratio within about 5 % of 1.00x is
// not a difference this script can show.
//   BENCH_BASELINE=<built checkout> node bench/call-pairs.js
//   PAIRS_ERA=2026-07-28|2025-06-18 (2025-06-18)  PAIRS=4  PAIRS_BLOCKS=30
//   PAIRS_CALLS=300 per block  PAIRS_IN_FLIGHT=16  PAIRS_SAME=1: this build against itself (A/A)
import fs from 'node:fs'
import { LEGACY, MODERN } from './lib/clients.js'
import { loadConfig } from './lib/config.js'
import { createContext } from './lib/context.js'
import { processCpuMs } from './lib/cpu.js'
import { connectRaw, rawEchoCall } from './lib/raw/client.js'
import { tuttiBaseTarget, tuttiTarget } from './lib/targets/tutti.js'

/** @param {string} name @param {number} dflt */
const int = (name, dflt) => Math.max(1, Number.parseInt(process.env[name] ?? '', 10) || dflt)
const cfg = loadConfig()
if (!cfg.baseline && !process.env.PAIRS_SAME) throw new Error('set BENCH_BASELINE=<a built tutti checkout>')
const ctx = createContext(cfg)
const era = process.env.PAIRS_ERA === MODERN ? MODERN : LEGACY
const pairs = int('PAIRS', 4)
const blocks = int('PAIRS_BLOCKS', 30)
const calls = int('PAIRS_CALLS', 300)
const inFlight = int('PAIRS_IN_FLIGHT', 16)
const targets = process.env.PAIRS_SAME ? [tuttiTarget, tuttiTarget] : [tuttiTarget, tuttiBaseTarget]
/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** `n` calls with `inFlight` at a time. @param {() => Promise<void>} call @param {number} n */
async function burst(call, n) {
  let next = 0
  const worker = async () => {
    while (next++ < n) await call()
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, worker))
}

/** @param {number} p  the pair's index */
async function measurePair(p) {
  /** @type {{ stop: () => Promise<unknown>, close: () => Promise<void>, call: () => Promise<void>, pid: number }[]} */
  const live = []
  try {
    for (const [i, t] of (p % 2 ? [...targets].reverse() : targets).entries()) {
      const started = await t.start({ ...ctx, dir: (sub) => ctx.dir(`pair-${p}-${i}-${sub}`) })
      const variant = started.variants.find((v) => v.era === era)
      if (!variant?.raw) throw new Error(`${t.id}: no ${era} variant`)
      const conn = await connectRaw(variant.raw, era, 30_000)
      const pid = started.gatewayPid?.()
      if (pid === undefined) throw new Error(`${t.id}: no daemon pid`)
      live.push({ stop: started.stop, close: conn.close, call: rawEchoCall(conn, 'everything_echo'), pid })
    }
    if (p % 2) live.reverse()
    for (const l of live) await burst(l.call, 2000)
    /** @type {number[][]} CPU ms per call of each block, per build */
    const per = [[], []]
    for (let b = 0; b < blocks; b++)
      for (const j of b % 2 ? [1, 0] : [0, 1]) {
        const c0 = processCpuMs(live[j].pid) ?? Number.NaN
        await burst(live[j].call, calls)
        per[j].push(((processCpuMs(live[j].pid) ?? Number.NaN) - c0) / calls)
      }
    return { mine: median(per[0]), base: median(per[1]), ratio: median(per[0].map((x, i) => x / per[1][i])) }
  } finally {
    for (const l of live) {
      await l.close().catch(() => {}) // the daemon is stopped next
      await l.stop()
    }
  }
}

const what = process.env.PAIRS_SAME ? 'this build against itself' : `against ${cfg.baseline?.commit}`
console.log(
  `tools/call daemon CPU, ${era}, ${what}: ${pairs} pairs × ${blocks} blocks × ${calls} calls, ` +
    `${inFlight} in flight`,
)
const ratios = []
try {
  for (let p = 0; p < pairs; p++) {
    const r = await measurePair(p)
    ratios.push(r.ratio)
    console.log(
      `  pair ${p + 1}: ${r.mine.toFixed(4)} against ${r.base.toFixed(4)} ms a call, ratio ${r.ratio.toFixed(3)}`,
    )
  }
  const geo = Math.exp(ratios.reduce((s, x) => s + Math.log(x), 0) / ratios.length)
  console.log(
    `  geometric mean over pairs: ${geo.toFixed(3)}x (pairs ${Math.min(...ratios).toFixed(2)}–` +
      `${Math.max(...ratios).toFixed(2)})`,
  )
} finally {
  fs.rmSync(ctx.runRoot, { recursive: true, force: true })
}
