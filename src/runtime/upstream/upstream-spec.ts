import path from 'node:path'
import type { LoadedRelease } from '../manifest/load.js'
import { DATA_DIR_VAR, expandVariables } from '../manifest/schema.js'

/** Everything needed to dial one connector's upstream, resolved from its release and credentials. */
export type UpstreamSpec =
  | { kind: 'stdio'; key: string; command: string; args: string[]; cwd: string; env: Record<string, string> }
  | { kind: 'http'; key: string; url: string; headers: Record<string, string> }

/** The only variables a stdio upstream inherits from the daemon: enough to run, no secrets. */
const INHERITED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SHELL', 'TERM', 'SystemRoot', 'windir', 'ComSpec', 'PATHEXT', 'APPDATA', 'LOCALAPPDATA', 'USERPROFILE']

export function baseEnvironment(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {}
  for (const name of INHERITED) if (from[name] !== undefined) env[name] = from[name]!
  return env
}

export function upstreamSpec(release: LoadedRelease, credentials: Readonly<Record<string, string>>, dataDir: string): UpstreamSpec | undefined {
  const { mcp, key } = release.manifest
  if (!mcp) return undefined
  const vars = { ...credentials, [DATA_DIR_VAR]: dataDir }
  if (mcp.transport === 'http') {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(mcp.headers)) headers[name] = expandVariables(value, vars)
    return { kind: 'http', key, url: expandVariables(mcp.url, vars), headers }
  }
  // "node" runs with the daemon's own node; a path is a file in the release; anything else is looked up on PATH
  const command = mcp.command === 'node' ? process.execPath : mcp.command.includes('/') || mcp.command.includes('\\') ? path.resolve(release.root, mcp.command) : mcp.command
  const env: Record<string, string> = { ...baseEnvironment(), [DATA_DIR_VAR]: dataDir }
  for (const [name, value] of Object.entries(mcp.env)) env[name] = expandVariables(value, vars)
  return { kind: 'stdio', key, command, args: mcp.args.map((a) => expandVariables(a, vars)), cwd: release.root, env }
}
