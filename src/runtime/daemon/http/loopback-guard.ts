/**
 * DNS-rebinding and cross-site protection, run before anything else: the
 * Host must name a loopback address (any port), and an Origin, when present,
 * must be a loopback origin.
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])

export function hostIsLoopback(host: string | null): boolean {
  if (!host) return false
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase())
  return !!m && LOOPBACK_HOSTS.has(m[1]!)
}

export function originIsLoopback(origin: string | null): boolean {
  if (origin === null) return true
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return LOOPBACK_HOSTS.has(url.hostname.toLowerCase())
}

export type GuardFailure = { status: 403; reason: string }

export function checkLoopback(headers: Headers): GuardFailure | undefined {
  if (!hostIsLoopback(headers.get('host'))) return { status: 403, reason: 'Host header must name a loopback address' }
  if (!originIsLoopback(headers.get('origin'))) return { status: 403, reason: 'Origin is not a loopback origin' }
  return undefined
}
