import { localhostAllowedHostnames, localhostAllowedOrigins, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server'

/**
 * DNS-rebinding and cross-site protection, run before anything else (the
 * SDK's validators, with the loopback allowlists): the Host must name a
 * loopback address (any port), and an Origin, when present, must be a
 * loopback origin.
 */
const HOSTS = localhostAllowedHostnames()
const ORIGINS = localhostAllowedOrigins()

export type GuardFailure = { status: 403; reason: string }

export function checkLoopback(headers: Headers): GuardFailure | undefined {
  const host = validateHostHeader(headers.get('host'), HOSTS)
  if (!host.ok) return { status: 403, reason: `Host header must name a loopback address (${host.message})` }
  const origin = validateOriginHeader(headers.get('origin'), ORIGINS)
  if (!origin.ok) return { status: 403, reason: `Origin is not a loopback origin (${origin.message})` }
  return undefined
}
