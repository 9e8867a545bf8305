import path from 'node:path'
import type { LoadedRelease } from '../manifest/load.js'
import {
  authVariableNames,
  DATA_DIR_VAR,
  expandVariables,
  RELEASE_ROOT_VAR,
  resolveSettings,
  storedSettings,
} from '../manifest/schema.js'
import type { UpstreamOAuth } from '../oauth/upstream-grant.js'

/** Everything needed to dial one connector's upstream, resolved from its release and credentials. */
export type UpstreamSpec = (
  | { kind: 'stdio'; key: string; command: string; args: string[]; cwd: string; env: Record<string, string> }
  | HttpSpec
) & { timeouts?: UpstreamTimeouts }

/** The manifest's `mcp.timeouts` in milliseconds; an absent one is tutti's default (UPSTREAM_LIMITS). */
export interface UpstreamTimeouts {
  toolCallMs?: number
  startupMs?: number
}

/** A remote upstream; `mayOfferOAuth`: the manifest has no auth, so a 401 may be an OAuth server's. */
type HttpSpec = {
  kind: 'http'
  key: string
  url: string
  headers: Record<string, string>
  oauth?: UpstreamOAuth
  mayOfferOAuth?: true
}

/** What the install recorded for the upstream (see install/recorded-environment.ts). */
export interface UpstreamRecord {
  /** The command resolved by the installing shell; absent for "node" and for installs that predate recording. */
  command?: string
  /** The installing shell's base environment. */
  environment: Record<string, string>
  settings?: Record<string, string>
}

/**
 * The upstream's whole environment is explicit: the recorded base set, every
 * declared credential and setting under its own name, the data directory,
 * then `mcp.env` (renames and extras). Nothing comes from the daemon's own
 * environment, so it does not matter who started the daemon.
 */
export function upstreamSpec(
  release: LoadedRelease,
  record: UpstreamRecord,
  credentials: Readonly<Record<string, string>>,
  dataDir: string,
): UpstreamSpec | undefined {
  const { mcp, key } = release.manifest
  if (!mcp) return undefined
  const stored = storedSettings(release.manifest, record.settings, credentials)
  const settings = resolveSettings(release.manifest, stored, dataDir)
  const vars: Record<string, string> = {
    ...settings,
    ...credentials,
    [DATA_DIR_VAR]: dataDir,
    [RELEASE_ROOT_VAR]: release.root,
  }
  const timeouts = timeoutsOf(release)
  if (mcp.transport === 'http') {
    // remote: credentials go only where the manifest places them
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(mcp.headers)) headers[name] = expandVariables(value, vars)
    // no auth in the manifest: a 401 may still be an OAuth server's (upstream/unauthorized.ts)
    const mayOfferOAuth = release.manifest.auth.kind === 'none' ? { mayOfferOAuth: true as const } : {}
    return { kind: 'http', key, url: expandVariables(mcp.url, vars), headers, ...timeouts, ...mayOfferOAuth }
  }
  const env: Record<string, string> = { ...record.environment, ...settings, [DATA_DIR_VAR]: dataDir }
  for (const name of authVariableNames(release.manifest))
    if (credentials[name] !== undefined) env[name] = credentials[name]
  for (const [name, value] of Object.entries(mcp.env)) env[name] = expandVariables(value, vars)
  const args = mcp.args.map((a) => expandVariables(a, vars))
  return { kind: 'stdio', key, command: commandOf(release, record), args, cwd: release.root, env, ...timeouts }
}

function timeoutsOf(release: LoadedRelease): { timeouts?: UpstreamTimeouts } {
  const declared = release.manifest.mcp?.timeouts
  if (!declared) return {}
  const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : Math.ceil(seconds * 1000))
  const toolCallMs = ms(declared.toolCallSeconds)
  const startupMs = ms(declared.startupSeconds)
  return { timeouts: { ...(toolCallMs ? { toolCallMs } : {}), ...(startupMs ? { startupMs } : {}) } }
}

/** "node" is tutti's own node; otherwise the recorded command, else (older installs) the manifest's. */
function commandOf(release: LoadedRelease, record: UpstreamRecord): string {
  const command = release.manifest.mcp?.transport === 'stdio' ? release.manifest.mcp.command : ''
  if (command === 'node') return process.execPath
  if (record.command) return record.command
  return command.includes('/') || command.includes('\\') ? path.resolve(release.root, command) : command
}
