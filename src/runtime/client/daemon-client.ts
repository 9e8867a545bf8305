import http from 'node:http'
import { ErrorCodes, fromWire, TuttiError, type WireError } from '../errors.js'
import type { availableMessage } from '../control-protocol/available.js'
import type { healthMessage } from '../control-protocol/health.js'
import type { NameOf, RequestOf, ResponseOf } from '../control-protocol/message.js'
import type { reconcileMessage } from '../control-protocol/reconcile.js'
import type { statusMessage } from '../control-protocol/status.js'
import type { stopMessage } from '../control-protocol/stop.js'
import type { toolTableMessage } from '../control-protocol/tool-table.js'
import { CONTROL_PREFIX } from '../control-protocol/version.js'

/** A full reconcile may start every eager upstream (each bounded by its own connect timeout). */
const RECONCILE_ANSWER_MS = 120_000
/** Time for the answer itself on a loaded machine, beyond what the daemon was asked to wait. */
const ANSWER_MARGIN_MS = 10_000

export interface DaemonEndpoint {
  port: number
  controlToken: string
}

/**
 * The one way the CLI talks to the daemon: typed control calls over loopback
 * HTTP. Start-up cost matters here: node:http rather than fetch, and message
 * types only (the daemon validates requests; its answers are trusted once
 * the version handshake matched).
 */
export class DaemonClient {
  constructor(readonly endpoint: DaemonEndpoint) {}

  async call<M>(name: NameOf<M>, request: RequestOf<M>, timeoutMs = 60_000): Promise<ResponseOf<M>> {
    const message = { name }
    const body = JSON.stringify(request ?? {})
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.endpoint.port,
          method: 'POST',
          path: `${CONTROL_PREFIX}/${message.name}`,
          headers: {
            host: `127.0.0.1:${this.endpoint.port}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: `Bearer ${this.endpoint.controlToken}`,
          },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
          res.on('error', reject)
        },
      )
      req.on('timeout', () =>
        req.destroy(new TuttiError(ErrorCodes.DAEMON_UNREACHABLE, `no answer within ${timeoutMs} ms`)),
      )
      req.on('error', reject)
      req.end(body)
    }).catch((err: Error) => {
      throw new TuttiError(ErrorCodes.DAEMON_UNREACHABLE, `daemon did not answer ${message.name}: ${err.message}`, {
        cause: err,
      })
    })
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new TuttiError(
        ErrorCodes.DAEMON_PROTOCOL,
        `daemon answered ${message.name} with HTTP ${status} and a body that is not JSON`,
      )
    }
    if (status !== 200) {
      const wire = (json as { error?: WireError }).error
      if (wire?.code && wire.message) throw fromWire(wire)
      throw new TuttiError(ErrorCodes.DAEMON_PROTOCOL, `daemon answered ${message.name} with HTTP ${status}`)
    }
    if (!json || typeof json !== 'object')
      throw new TuttiError(ErrorCodes.DAEMON_PROTOCOL, `daemon answered ${message.name} with an unexpected shape`)
    return json as ResponseOf<M>
  }

  health(timeoutMs = 2_000) {
    return this.call<typeof healthMessage>('health', {}, timeoutMs)
  }

  status() {
    return this.call<typeof statusMessage>('status', {})
  }

  available(token?: string) {
    return this.call<typeof availableMessage>('available', token ? { token } : {})
  }

  /** `waitMs`: answer once each connector has an outcome, or after that long (see reconcile.ts). */
  reconcile(keys?: string[], waitMs?: number) {
    const request: { keys?: string[]; waitMs?: number } = {}
    if (keys) request.keys = keys
    if (waitMs !== undefined) request.waitMs = waitMs
    return this.call<typeof reconcileMessage>('reconcile', request, (waitMs ?? RECONCILE_ANSWER_MS) + ANSWER_MARGIN_MS)
  }

  /** The whole tool table the daemon knows of `key` (what a tool filter's names are checked against). */
  toolTable(key: string) {
    return this.call<typeof toolTableMessage>('tool-table', { key })
  }

  stop(revokeSessions = false) {
    return this.call<typeof stopMessage>('stop', { revokeSessions }, 10_000)
  }
}
