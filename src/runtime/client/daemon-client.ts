import http from 'node:http'
import { ErrorCodes, fromWire, TuttiError, type WireError } from '../errors.js'
import { availableMessage } from '../protocol/available.js'
import { healthMessage } from '../protocol/health.js'
import type { ControlMessage } from '../protocol/message.js'
import { reconcileMessage } from '../protocol/reconcile.js'
import { statusMessage } from '../protocol/status.js'
import { stopMessage } from '../protocol/stop.js'
import { CONTROL_PREFIX } from '../protocol/version.js'

export interface DaemonEndpoint {
  port: number
  controlToken: string
}

/**
 * The one way the CLI talks to the daemon: typed control calls over loopback
 * HTTP. node:http rather than fetch keeps CLI start-up light.
 */
export class DaemonClient {
  constructor(readonly endpoint: DaemonEndpoint) {}

  async call<Req, Res>(message: ControlMessage<Req, Res>, request: Req, timeoutMs = 60_000): Promise<Res> {
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
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
      req.on('error', reject)
      req.end(body)
    }).catch((err: Error) => {
      throw new TuttiError(ErrorCodes.DAEMON_UNREACHABLE, `daemon did not answer ${message.name}: ${err.message}`, { cause: err })
    })
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new TuttiError(ErrorCodes.DAEMON_PROTOCOL, `daemon answered ${message.name} with HTTP ${status} and a body that is not JSON`)
    }
    if (status !== 200) {
      const wire = (json as { error?: WireError }).error
      if (wire?.code && wire.message) throw fromWire(wire)
      throw new TuttiError(ErrorCodes.DAEMON_PROTOCOL, `daemon answered ${message.name} with HTTP ${status}`)
    }
    const parsed = message.response.safeParse(json)
    if (!parsed.success) throw new TuttiError(ErrorCodes.DAEMON_PROTOCOL, `daemon answered ${message.name} with an unexpected shape`)
    return parsed.data
  }

  health(timeoutMs = 2_000) {
    return this.call(healthMessage, {}, timeoutMs)
  }

  status() {
    return this.call(statusMessage, {})
  }

  available() {
    return this.call(availableMessage, {})
  }

  reconcile(keys?: string[]) {
    return this.call(reconcileMessage, keys ? { keys } : {}, 120_000)
  }

  stop(revokeSessions = true) {
    return this.call(stopMessage, { revokeSessions }, 10_000)
  }
}
