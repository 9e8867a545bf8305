import { statePaths } from '../paths.js'
import { TuttiDaemon } from './daemon.js'

/**
 * Entry of the detached daemon process (spawned by the CLI, or run in the
 * foreground by `tutti daemon run`). It loads no CLI framework.
 */
export async function runDaemon(): Promise<TuttiDaemon> {
  const idleSeconds = Number(process.env.TUTTI_DAEMON_IDLE_TIMEOUT_SECONDS ?? 0)
  const daemon = new TuttiDaemon({ paths: statePaths(), idleTimeoutMs: Number.isFinite(idleSeconds) && idleSeconds > 0 ? idleSeconds * 1000 : 0 })
  const exitAfterStop = (reason: string): void => void daemon.stop(reason, { revokeSessions: false })
  void daemon.stopped.then(() => process.exit())
  process.on('SIGTERM', () => exitAfterStop('SIGTERM'))
  process.on('SIGINT', () => exitAfterStop('SIGINT'))
  process.on('SIGHUP', () => exitAfterStop('SIGHUP'))
  process.on('uncaughtException', (err) => {
    daemon.log.error('uncaught exception', { error: err, stack: err.stack })
    exitAfterStop('uncaught exception')
  })
  process.on('unhandledRejection', (err) => {
    daemon.log.error('unhandled rejection', { error: err })
  })
  try {
    await daemon.start()
  } catch (err) {
    daemon.log.error('daemon failed to start', { error: err })
    process.exitCode = 1
    await daemon.stop('start failed', { revokeSessions: false })
  }
  return daemon
}

const isEntry = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))
if (isEntry) void runDaemon()
