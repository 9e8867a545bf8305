import { format } from 'node:util'
import type { Logger } from '../log/logger.js'
import { statePaths } from '../paths.js'
import { runsAsMain } from '../proc/main-module.js'
import { TuttiDaemon } from './daemon.js'

/**
 * Entry of the detached daemon process (spawned by the CLI, or run in the
 * foreground by `tutti daemon run`). It loads no CLI framework.
 */
export async function runDaemon(options: { detached?: boolean } = {}): Promise<TuttiDaemon> {
  const idleSeconds = Number(process.env.TUTTI_DAEMON_IDLE_TIMEOUT_SECONDS ?? 0)
  const daemon = new TuttiDaemon({
    paths: statePaths(),
    idleTimeoutMs: Number.isFinite(idleSeconds) && idleSeconds > 0 ? idleSeconds * 1000 : 0,
  })
  // detached, stdout and stderr are daemon.log; in the foreground (`daemon run`) they stay the terminal's
  if (options.detached) routeConsoleToLog(daemon.log)
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

/**
 * daemon.log is NDJSON only: libraries that print (h3 reporting a client
 * that aborted mid-body, node's warnings) go through the logger as fields,
 * not as raw multi-line stack traces on the log's file descriptor.
 */
function routeConsoleToLog(log: Logger): void {
  const console_ = log.child('console')
  const text = (args: unknown[]): { text: string } => ({ text: format(...args) })
  console.error = (...args: unknown[]) => console_.error('console.error', text(args))
  console.warn = (...args: unknown[]) => console_.warn('console.warn', text(args))
  console.log = (...args: unknown[]) => console_.info('console.log', text(args))
  console.info = console.log
  console.debug = (...args: unknown[]) => console_.debug('console.debug', text(args))
  process.removeAllListeners('warning')
  process.on('warning', (warning) => console_.warn('process warning', { name: warning.name, text: warning.message }))
}

if (runsAsMain(import.meta.url)) void runDaemon({ detached: true })
