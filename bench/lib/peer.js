// Starting a peer gateway: node (with the net guard preloaded) in its own
// process group, logs in the run dir, then a bounded readiness wait that
// fails fast (with the log tail) if the process exits.
import path from 'node:path'
import { NET_GUARD } from './context.js'
import { listeningAddresses } from './listen-check.js'
import { logTail, spawnGroup, stopProc } from './procs.js'
import { pollUntil } from './wait.js'

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {{ name: string, script: string, args: string[], env?: Record<string, string>, ready: () => Promise<boolean>,
 * readyMs?: number }} spec
 */
export async function startPeer(ctx, { name, script, args, env = {}, ready, readyMs = ctx.cfg.startBudgetMs }) {
  const dir = ctx.dir(name)
  const logFile = path.join(dir, `${name}.log`)
  const argv = ['--import', NET_GUARD, script, ...args]
  /** @type {ReturnType<typeof listeningAddresses>} */
  let listens = []
  const proc = await spawnGroup(name, process.execPath, argv, { env: ctx.env(env), cwd: dir, logFile })
  try {
    await pollUntil(`${name} start`, readyMs, ready, {
      intervalMs: 100,
      abort: () =>
        proc.exited() ? `process ${proc.exitReason()}; log: ${logTail(logFile, 4).replace(/\s+/g, ' ')}` : undefined,
    })
    listens = listeningAddresses(proc.pid)
    const exposed = listens.filter((a) => !a.loopback)
    if (exposed.length)
      throw new Error(
        `${name} listens on a non-loopback address: ${exposed.map((a) => `${a.host}:${a.port}`).join(', ')}`,
      )
  } catch (err) {
    await stopProc(proc)
    throw err
  }
  return {
    proc,
    dir,
    logFile,
    listens: listens.map((a) => `${a.host}:${a.port}`),
    command: `node ${argv.map((a) => (a.includes(' ') ? JSON.stringify(a) : a)).join(' ')}`,
    stop: async () => `${name} ${await stopProc(proc)}`,
  }
}
