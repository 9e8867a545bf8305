/**
 * What a stdio upstream inherits. It is recorded from the shell that
 * installs (or connects) the connector and stored with the install, so the
 * upstream's environment is the same whoever started the daemon: an agent,
 * a shell without node_modules/.bin, or `env -i`.
 */
const BASE = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'SHELL',
  'TERM',
  'SystemRoot',
  'windir',
  'ComSpec',
  'PATHEXT',
  'APPDATA',
  'LOCALAPPDATA',
  'USERPROFILE',
]

/** Proxy and CA settings: a server behind a corporate proxy needs the same ones the user's shell has. */
export const NETWORK_VARIABLES = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
] as const

export function recordEnvironment(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {}
  for (const name of [...BASE, ...NETWORK_VARIABLES]) {
    const value = from[name]
    if (value !== undefined && value !== '') env[name] = value
  }
  return env
}
