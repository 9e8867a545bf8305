import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { statePaths } from '../paths.js'
import { runsAsMain } from '../proc/main-module.js'
import { runCachedBundle } from './code-cache.js'
import type { TuttiDaemon } from './daemon.js'
import type { runDaemon as runDaemonModule } from './main.js'

/*
 * The entry of dist/daemon/: scripts/bundle-daemon.js bundles this file as
 * main.js beside the daemon's CommonJS bundle, and replaces the placeholder
 * below with that bundle's file name (named after its content). It is what
 * the CLI spawns and what `tutti daemon run` imports; tsc's copy of it in
 * dist/runtime/daemon/ names no bundle and is never run.
 */
const BUNDLE_FILE = '__TUTTI_DAEMON_BUNDLE__'
/**
 * After start, time for the first requests (health, the command that started
 * the daemon) to be compiled into the cache too; short, because a daemon may
 * not live long (an idle timeout, a kill) and one that never saves helps none.
 */
const CACHE_SAVE_DELAY_MS = 500

const bundle = runCachedBundle<{ runDaemon: typeof runDaemonModule }>(
  fileURLToPath(new URL(BUNDLE_FILE, import.meta.url)),
  // per bundle and V8: a cache of another would be rejected anyway
  path.join(statePaths().codeCacheDir, `${path.basename(BUNDLE_FILE, '.cjs')}-v8-${process.versions.v8}.cache`),
)
// a process that exits by itself (another daemon holds the lock, a signal) did not crash on the cache
process.once('exit', () => bundle.started())

export async function runDaemon(options: { detached?: boolean } = {}): Promise<TuttiDaemon> {
  const daemon = await bundle.exports.runDaemon(options)
  // started through the cached code (listening, first reconcile done): the cache is trusted from now on
  bundle.started()
  if (bundle.cache === 'dropped') {
    const why = 'a start that used it never finished (V8 aborts on a damaged cache)'
    daemon.log.warn(`code cache removed unused: ${why}`, { pids: bundle.unfinished })
  }
  daemon.log.info('code cache', { use: bundle.cache, bundle: path.basename(BUNDLE_FILE) })
  const save = (): void =>
    void bundle.saveCache().then(
      (saved) => saved && daemon.log.info('code cache written'),
      (err: unknown) => daemon.log.warn('could not write the code cache', { error: err }),
    )
  setTimeout(save, CACHE_SAVE_DELAY_MS).unref()
  return daemon
}

if (runsAsMain(import.meta.url)) void runDaemon({ detached: true })
