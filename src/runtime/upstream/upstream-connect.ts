import { SdkError, SdkErrorCode, type Client, type Transport } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'
import { MODERN_REVISION } from '../mcp-wire.js'
import { NO_ERA_PROBE_ENV, switchedOff } from '../names.js'
import { CallRelays } from './call-relays.js'
import { connectFailure, seconds, StartupTimeout } from './connection-failures.js'
import { httpTransport } from './http-transport.js'
import { ProcessGroupStdioTransport } from './stdio-transport.js'
import { isUnauthorized, unauthorizedFailure } from './unauthorized.js'
import type { UpstreamEras } from './upstream-eras.js'
import { UPSTREAM_LIMITS } from './upstream-limits.js'
import type { UpstreamSpec } from './upstream-spec.js'

/** Where a stdio server's stderr goes, line by line (the connector's log). */
export type StderrLines = (line: string) => void

/**
 * The stdio era probe's bound: a server that has not answered
 * `server/discover` by then is taken for a 2025 server and sent
 * `initialize` on the same pipe (the spec's "no response within a
 * reasonable timeout"; JSON-RPC wants an answer to every request, so only
 * a broken server is silent). It covers the server's own start, so it is
 * not short, but at most a third of the start's bound; a 2026-07-28 server
 * slower than this still works, over 2025.
 */
export const ERA_PROBE_MS = 10_000

export interface ConnectPlan {
  spec: UpstreamSpec
  signal?: AbortSignal
  onStderrLine?: StderrLines
  /** What earlier starts found out about a stdio server's era (absent: always probe). */
  eras?: UpstreamEras
  /** A client with the connection's handlers on it, for one attempt. */
  client(options: ConstructorParameters<typeof Client>[1]): Client
}

export interface Connected {
  client: Client
  transport: Transport
}

/**
 * Dials an upstream and answers its start, within the start's bound:
 * Streamable HTTP, or a stdio process in its own group. Both are probed
 * with `server/discover` and speak 2026-07-28 where the server does, else
 * 2025 (`initialize`). A stdio server that exits on the probe, as servers
 * of some SDKs do on any request before `initialize`, is started again and
 * initialized; one that refused the probe is remembered (upstream-eras.ts).
 */
export async function connectUpstream(plan: ConnectPlan): Promise<Connected> {
  const { spec, signal } = plan
  let attempt: Connected | undefined
  const tried = (a: Connected): Connected => (attempt = a)
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const startupMs = spec.timeouts?.startupMs ?? UPSTREAM_LIMITS.connectTimeoutMs
  const abandoned = 'the connect was abandoned: the connector changed meanwhile'
  try {
    return await Promise.race([
      // no call's async context: a lazy upstream's pipes and streams must not carry the call that started it
      CallRelays.outsideCalls(() => dial(plan, startupMs, tried)),
      new Promise<never>((_, reject) => {
        const named = spec.timeouts?.startupMs ? ' (mcp.timeouts.startupSeconds)' : ''
        const timedOut = () => reject(new StartupTimeout(`no initialize answer within ${seconds(startupMs)}${named}`))
        timer = setTimeout(timedOut, startupMs)
        onAbort = () => reject(new TuttiError(ErrorCodes.UPSTREAM_FAILED, abandoned))
        if (signal?.aborted) onAbort()
        else signal?.addEventListener('abort', onAbort, { once: true })
      }),
    ])
  } catch (err) {
    // the connect already failed, and that is what is reported; a second failure from closing adds nothing
    await attempt?.transport.close().catch(() => undefined)
    if (signal?.aborted) throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, abandoned, { cause: err })
    // a 401 without a grant: the server may offer an OAuth sign-in the manifest does not mention
    if (spec.kind === 'http' && !spec.oauth && isUnauthorized(err)) throw await unauthorizedFailure(spec, err)
    if (attempt) throw connectFailure(spec, attempt.transport, err)
    throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, `could not connect: ${(err as Error).message}`, { cause: err })
  } finally {
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
  }
}

async function dial(plan: ConnectPlan, startupMs: number, tried: (a: Connected) => Connected): Promise<Connected> {
  const { spec, eras } = plan
  if (spec.kind === 'http') {
    const http = tried(attemptOf(plan, {}))
    await http.client.connect(http.transport)
    return http
  }
  const probed = { key: spec.key, command: spec.command, args: spec.args, cwd: spec.cwd }
  // TUTTI_NO_ERA_PROBE=1: the SDK client's plain 2025 connect, as before tutti probed
  const known = switchedOff(NO_ERA_PROBE_ENV) || ((await eras?.isLegacy(probed)) ?? false)
  const first = tried(attemptOf(plan, { timeoutMs: Math.min(ERA_PROBE_MS, Math.ceil(startupMs / 3)) }))
  try {
    await first.client.connect(first.transport, known ? { prior: { kind: 'legacy' } } : undefined)
  } catch (err) {
    if (known || !closedDuringProbe(err)) throw err
    // it exited on server/discover: a 2025 server, which now gets a fresh process and initialize
    const second = tried(attemptOf(plan, {}))
    await second.client.connect(second.transport, { prior: { kind: 'legacy' } })
    await eras?.rememberLegacy(probed)
    return second
  }
  // refused or unanswered: a 2025 server, not probed again on every start (a lazy one starts after each idle stop)
  if (!known && first.client.getNegotiatedProtocolVersion() !== MODERN_REVISION) await eras?.rememberLegacy(probed)
  return first
}

/** One attempt's client and transport; the client probes with server/discover before it initializes. */
function attemptOf(plan: ConnectPlan, probe: { timeoutMs?: number }): Connected {
  const client = plan.client({ versionNegotiation: { mode: 'auto', probe } })
  return { client, transport: transportOf(plan) }
}

function transportOf({ spec, onStderrLine }: ConnectPlan): Transport {
  if (spec.kind === 'http') return httpTransport(spec)
  return new ProcessGroupStdioTransport({
    command: spec.command,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    maxMessageBytes: UPSTREAM_LIMITS.maxMessageBytes,
    closeGraceMs: UPSTREAM_LIMITS.closeGraceMs,
    ...(onStderrLine ? { onStderrLine } : {}),
  })
}

/** The SDK's verdict on a stdio server that closed its end while it was being probed in place. */
function closedDuringProbe(err: unknown): boolean {
  return (
    err instanceof SdkError &&
    err.code === SdkErrorCode.EraNegotiationFailed &&
    err.message.includes('closed during the server/discover probe')
  )
}
