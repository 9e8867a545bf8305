import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client'
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client'
import { META, MODERN_REVISION } from '../mcp-wire.js'
import { UPSTREAM_CLIENT_INFO } from '../names.js'
import { UPSTREAM_CLIENT_CAPABILITIES } from './call-relays.js'
import { ProcessGroupStdioTransport } from './stdio-transport.js'

/** One request's bounds: the caller's signal, and the connection's timeout for it. */
export interface RawOptions {
  signal?: AbortSignal
  timeout: number
}

/** Writes messages to an upstream, and sees each of its messages before the SDK client does. */
export interface WireTap {
  send(message: JSONRPCMessage): Promise<void>
  /** `take` sees every message from the upstream first; one it takes (true) the SDK client never sees. */
  tap(take: (message: JSONRPCMessage) => boolean): void
}

/** The tap on a connected transport: stdio's own interception hook, or (HTTP) its message callback. */
export function wireTap(transport: Transport): WireTap {
  if (transport instanceof ProcessGroupStdioTransport)
    return {
      send: async (message) => {
        if (!transport.writeLine(`${JSON.stringify(message)}\n`))
          throw new SdkError(SdkErrorCode.NotConnected, 'Not connected')
      },
      tap: (take) => {
        const before = transport.intercept
        transport.intercept = (message) => take(message) || (before?.(message) ?? false)
      },
    }
  return {
    send: (message) => transport.send(message),
    tap: (take) => {
      // set by the SDK client's connect: the tap goes in front of it
      const inner = transport.onmessage
      transport.onmessage = (message, extra) => {
        if (!take(message)) inner?.(message, extra)
      }
    },
  }
}

/** Ids of raw requests: strings, which neither the SDK client's counter nor direct calls (numbers) use. */
const ID_PREFIX = 'tutti-raw-'

interface Pending {
  resolve(result: Record<string, unknown>): void
  reject(error: Error): void
}

/**
 * Requests on a 2026-07-28 link whose answers the SDK client's codec
 * would refuse: a tools/call answered `resultType: "task"` and the tasks
 * extension's own methods (typescript-sdk#2637). Each carries the
 * envelope the SDK client would attach (the caller's `_meta` wins), and
 * its answer is taken off the wire before the SDK client sees it, handed
 * back as the upstream sent it. Errors, a cancel, a timeout and a closed
 * connection end it as they end the SDK's own requests.
 */
export class RawRequests {
  private readonly pending = new Map<string, Pending>()
  private next = 1

  constructor(private readonly wire: WireTap) {
    wire.tap((message) => this.take(message))
  }

  request(method: string, params: Record<string, unknown>, options: RawOptions): Promise<Record<string, unknown>> {
    const { signal, timeout } = options
    if (signal?.aborted) return Promise.reject(asCancel(signal.reason))
    const id = `${ID_PREFIX}${this.next++}`
    const _meta = { ...envelope(), ...(params._meta as Record<string, unknown> | undefined) }
    return new Promise((resolve, reject) => {
      const done = (): void => {
        this.pending.delete(id)
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      const cancel = (reason: unknown): void => {
        if (!this.pending.has(id)) return
        done()
        const params = { requestId: id, reason: String(reason), _meta: envelope() }
        // a cancel that cannot be written has nobody to reach
        this.wire.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params } as never).catch(() => {})
        reject(asCancel(reason))
      }
      const onAbort = (): void => cancel(signal!.reason)
      const timer = setTimeout(
        () => cancel(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout })),
        timeout,
      )
      signal?.addEventListener('abort', onAbort, { once: true })
      this.pending.set(id, {
        resolve: (result) => {
          done()
          resolve(result)
        },
        reject: (error) => {
          done()
          reject(error)
        },
      })
      const message = { jsonrpc: '2.0', id, method, params: { ...params, _meta } } as JSONRPCMessage
      // not written (the connection is gone, or HTTP refused it): the request fails with why
      this.wire.send(message).catch((err: unknown) => this.pending.get(id)?.reject(err as Error))
    })
  }

  /** The connection closed: every request in flight fails as the SDK fails its own. */
  connectionClosed(): void {
    const error = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed')
    for (const pending of [...this.pending.values()]) pending.reject(error)
  }

  private take(message: JSONRPCMessage): boolean {
    const { id } = message as { id?: unknown }
    if (typeof id !== 'string' || !id.startsWith(ID_PREFIX) || 'method' in message) return false
    const pending = this.pending.get(id)
    if (!pending) return true
    const answer = message as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } }
    if (answer.error && typeof answer.error.code === 'number')
      pending.reject(ProtocolError.fromError(answer.error.code, String(answer.error.message ?? ''), answer.error.data))
    else if (answer.result && typeof answer.result === 'object' && !Array.isArray(answer.result))
      pending.resolve(answer.result as Record<string, unknown>)
    else pending.reject(new SdkError(SdkErrorCode.InvalidResult, 'the upstream answered with neither result nor error'))
    return true
  }
}

/** What every 2026-07-28 request of tutti's upstream client declares (the SDK client's envelope). */
export function envelope(): Record<string, unknown> {
  return {
    [META.protocolVersion]: MODERN_REVISION,
    [META.clientInfo]: { ...UPSTREAM_CLIENT_INFO },
    [META.clientCapabilities]: UPSTREAM_CLIENT_CAPABILITIES,
  }
}

function asCancel(reason: unknown): Error {
  return reason instanceof Error ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason))
}
