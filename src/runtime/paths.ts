import os from 'node:os'
import path from 'node:path'
import { shimCommand } from './names.js'

/**
 * Every path tutti touches is computed here, so a reader can see the whole
 * state directory layout in one place (DESIGN §4).
 */
export function resolveStateDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (env.TUTTI_STATE_DIR) return path.resolve(env.TUTTI_STATE_DIR)
  if (env.XDG_STATE_HOME) return path.join(path.resolve(env.XDG_STATE_HOME), 'tutti')
  const home = env.HOME || os.homedir()
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'tutti')
  if (platform === 'win32') return path.join(env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'tutti')
  return path.join(home, '.local', 'state', 'tutti')
}

export interface StatePaths {
  readonly root: string
  /** pid, port, versions and the control token of the running daemon (0600). */
  readonly daemonJson: string
  readonly daemonLog: string
  /** The port the last daemon listened on; a restarted daemon asks for it first. */
  readonly daemonPort: string
  /** Held (proper-lockfile) by the running daemon for its whole life. */
  readonly daemonLockTarget: string
  /**
   * The daemon's pid, for people and scripts; never signalled. Its lock proves a dead holder by its own owner record
   * (fs/lock.ts).
   */
  readonly daemonPid: string
  /** Held by a CLI while it decides whether to spawn a daemon. */
  readonly startLockTarget: string
  /** Read-modify-write of installed.json / credentials.json / sessions.json goes through this. */
  readonly stateLockTarget: string
  /** Held while a release is stored and recorded, and while releases are pruned (store/release-pruning.ts). */
  readonly releasesLockTarget: string
  readonly installedJson: string
  readonly credentialsJson: string
  /**
   * OAuth grants of remote connectors: client registrations and tokens (0600, written under the state lock;
   * oauth/grant-store.ts).
   */
  readonly oauthGrantsJson: string
  readonly sessionsJson: string
  readonly connectorsDir: string
  /** The only directory put on agents' PATH: tutti-connector-<key> shims. */
  readonly binDir: string
  readonly shimLockTarget: string
  /** Per-session projections (CODEX_HOME, Claude --add-dir, ...). */
  readonly sessionsDir: string
  readonly tmpDir: string
  /** The last upstream tools/list of each connector, for lazy-by-cache starts (reconcile/tool-cache.ts). */
  toolCacheFile(key: string): string
  /** A stdio upstream found to speak only 2025 MCP, so it is not probed on every start (upstream/upstream-eras.ts). */
  upstreamEraFile(key: string): string
  /** V8's compiled code of the daemon bundle, so the next start skips compiling it (daemon/code-cache.ts). */
  readonly codeCacheDir: string
  /** One record per live upstream process group, for reaping after a crash (proc/group-records.ts). */
  readonly upstreamsDir: string
  connectorDir(key: string): string
  releasesDir(key: string): string
  releaseDir(key: string, digest: string): string
  /** A connector's writable data directory, kept across upgrades, removed on uninstall. */
  dataDir(key: string): string
  /**
   * What `install --replace` set aside of the connectors it replaced: one directory each (store/replaced-connector.ts).
   */
  replacedDir(key: string): string
  shimPath(key: string): string
  /** Launch targets of a connector's shims; kept while it is installed (a stale shim refuses clearly), not after. */
  shimTargetsDir(key: string): string
  /** What a connector's upstream wrote to stderr and tutti's events about it, redacted (log/connector-log.ts). */
  connectorLog(key: string): string
  sessionDir(sessionId: string): string
  /**
   * The PATH directory of a session whose view narrows the connectors: links to the shims it sees (and `tutti`),
   * kept current by the daemon (sessions/session-bin.ts).
   */
  sessionBinDir(sessionId: string): string
}

export function statePaths(root: string = resolveStateDir()): StatePaths {
  const connectorsDir = path.join(root, 'connectors')
  const binDir = path.join(root, 'bin')
  const sessionsDir = path.join(root, 'sessions')
  return {
    root,
    daemonJson: path.join(root, 'daemon.json'),
    daemonLog: path.join(root, 'daemon.log'),
    daemonPort: path.join(root, 'daemon.port'),
    daemonLockTarget: path.join(root, 'daemon'),
    daemonPid: path.join(root, 'daemon.pid'),
    startLockTarget: path.join(root, 'daemon-start'),
    stateLockTarget: path.join(root, 'state'),
    releasesLockTarget: path.join(root, 'releases'),
    installedJson: path.join(root, 'installed.json'),
    credentialsJson: path.join(root, 'credentials.json'),
    oauthGrantsJson: path.join(root, 'oauth-grants.json'),
    sessionsJson: path.join(root, 'sessions.json'),
    connectorsDir,
    binDir,
    shimLockTarget: path.join(root, 'shims'),
    sessionsDir,
    tmpDir: path.join(root, 'tmp'),
    upstreamsDir: path.join(root, 'upstreams'),
    codeCacheDir: path.join(root, 'code-cache'),
    toolCacheFile: (key) => path.join(root, 'tool-cache', `${key}.json`),
    upstreamEraFile: (key) => path.join(root, 'upstream-eras', `${key}.json`),
    connectorDir: (key) => path.join(connectorsDir, key),
    releasesDir: (key) => path.join(connectorsDir, key, 'releases'),
    releaseDir: (key, digest) => path.join(connectorsDir, key, 'releases', digest),
    dataDir: (key) => path.join(connectorsDir, key, 'data'),
    replacedDir: (key) => path.join(connectorsDir, key, 'replaced'),
    shimPath: (key) => path.join(binDir, shimCommand(key)),
    shimTargetsDir: (key) => path.join(root, 'shims', key),
    connectorLog: (key) => path.join(connectorsDir, key, 'connector.log'),
    sessionDir: (sessionId) => path.join(sessionsDir, sessionId),
    sessionBinDir: (sessionId) => path.join(root, 'session-bin', sessionId),
  }
}
