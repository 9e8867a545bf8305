// Fresh daemons for a round of section list, when a baseline build shares it.
// Two runs of 800 and 1,000 lists on one pair of daemons (this build and the
// one before issue 24) gave a mean daemon CPU ratio of 0.97x, then 1.07x; six
// pairs of daemons of one build against itself gave 1.00x to 1.07x. A figure
// taken on one pair of processes is one draw of whatever a process brings
// (its heap and buffer layout, where its threads run), however many rounds
// it has. Starting both daemons again before each round makes the median
// over rounds a median over pairs of processes.
import { connectRaw, rawListTools } from './raw/client.js'
import { daemonPid, stopDaemon } from './tutti-cli.js'
import { prepareSession } from './targets/tutti.js'
import { pollUntil, withTimeout } from './wait.js'

/**
 * Stop each daemon, start it again (the first to start alternates by round), connect its rows again, wait until
 * it lists every tool, and warm it up. A daemon that fails marks its rows failed; the others go on.
 * @param {import('./context.js').RunContext} ctx
 * @param {import('./list-section.js').Daemon[]} daemons
 * @param {{ round: number, total: number }} o
 * @param {(line: string) => void} progress
 */
export async function restartDaemons(ctx, daemons, { round, total }, progress) {
  const { cfg } = ctx
  for (const d of round % 2 ? [...daemons].reverse() : daemons) {
    const live = d.conns.filter((c) => !c.row.error)
    if (!live.length) continue
    for (const c of live) await c.conn.close().catch(() => {}) // the daemon is stopped next anyway
    const stopped = await stopDaemon(d.t)
    try {
      const { url, headers } = await prepareSession(d.t, 'bench-list')
      const spec = { transport: /** @type {const} */ ('streamable-http'), url, headers }
      for (const c of live)
        c.conn = await withTimeout(`${d.name} ${c.row.era} connect`, cfg.startBudgetMs, () =>
          connectRaw(spec, c.row.era, cfg.requestTimeoutMs),
        )
      const listed = async () => (await rawListTools(live[0].conn)).length === total
      await pollUntil(`${d.name}: all ${total} tools listed`, 300_000, listed, { intervalMs: 250 })
      const pid = daemonPid(d.t.stateDir)
      progress(`${d.name}: round ${round + 1} on daemon ${pid} (${stopped})`)
      for (const c of live) {
        c.pid = pid
        for (let i = 0; i < cfg.listWarmup; i++) await rawListTools(c.conn)
      }
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err)
      for (const c of live) c.row.error = `round ${round + 1}: restart (${stopped}): ${why}`
      progress(`${d.name}: restart FAILED ${why}`)
    }
  }
}
