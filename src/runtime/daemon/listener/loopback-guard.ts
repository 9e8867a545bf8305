import type { HeaderLookup } from '../../http-surface/header-lookup.js'
import { localhostAllowedHostnames, localhostAllowedOrigins, validateOriginHeader } from '@modelcontextprotocol/server'

/**
 * DNS-rebinding and cross-site protection, run before anything else: the
 * Host must name a loopback address (any port), and an Origin, when present,
 * must be a loopback origin (the SDK's validator and allowlist).
 */
const HOSTS = localhostAllowedHostnames()
const ORIGINS = localhostAllowedOrigins()

/*
 * Host is `host [":" port]` and nothing else, and the host is one of the
 * loopback names as written. The SDK's validateHostHeader takes the hostname
 * of `new URL("http://" + host)`, so `evil@127.0.0.1`, `127.0.0.1/x` or
 * `0x7f.1` pass it: no real client sends those, and a proxy or client that
 * reads them differently would be talking to us about another host.
 */
const HOST_HEADER = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/

export type GuardFailure = { status: 403; reason: string }

function hostProblem(host: string | null): string | undefined {
  if (!host) return 'Missing Host header'
  const m = HOST_HEADER.exec(host)
  if (!m) return `Invalid Host header: ${host}`
  if (!HOSTS.includes(m[1]!.toLowerCase()) || (m[2] !== undefined && Number(m[2]) > 65_535))
    return `Invalid Host: ${host}`
  return undefined
}

export function checkLoopback(headers: HeaderLookup): GuardFailure | undefined {
  const host = hostProblem(headers.get('host'))
  if (host) return { status: 403, reason: `Host header must name a loopback address (${host})` }
  const origin = validateOriginHeader(headers.get('origin'), ORIGINS)
  if (!origin.ok) return { status: 403, reason: `Origin is not a loopback origin (${origin.message})` }
  return undefined
}
