import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from '../../log/logger.js'

/**
 * Keeps at most `max` idle keep-alive connections: when one more goes idle,
 * the one idle the longest is closed. A connection with a request in flight
 * (a tools/call, a listen stream) is never idle, so the cap only costs a
 * client a reconnect. While the server closes, idle connections are closed
 * at once instead of waiting out the keep-alive timeout.
 */
export class IdleSockets {
  /** Insertion order is idle order: the first one has been idle the longest. */
  private readonly idle = new Set<Socket>()
  private readonly inFlight = new WeakMap<Socket, number>()
  private draining = false
  private closedSinceLog = 0
  private lastLog = 0

  constructor(
    server: Server,
    private readonly max: number,
    private readonly log: Logger,
    private readonly warnEveryMs: number,
  ) {
    server.on('connection', (socket: Socket) => socket.once('close', () => this.idle.delete(socket)))
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.track(req.socket, res))
  }

  get size(): number {
    return this.idle.size
  }

  /** Close every idle connection now, and each busy one as soon as it goes idle. */
  drain(): void {
    this.draining = true
    for (const socket of this.idle) socket.destroy()
    this.idle.clear()
  }

  private track(socket: Socket, res: ServerResponse): void {
    this.idle.delete(socket)
    // pipelined requests share a socket: it is idle only when the last of them is done
    this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1)
    res.once('close', () => {
      const left = (this.inFlight.get(socket) ?? 1) - 1
      this.inFlight.set(socket, left)
      if (left === 0) this.wentIdle(socket)
    })
  }

  private wentIdle(socket: Socket): void {
    // a response with Connection: close ends its socket itself
    if (socket.destroyed || !socket.writable) return
    if (this.draining) {
      socket.destroy()
      return
    }
    this.idle.add(socket)
    if (this.idle.size <= this.max) return
    const oldest = this.idle.values().next().value as Socket
    this.idle.delete(oldest)
    oldest.destroy()
    this.noteClosed()
  }

  /** Worth knowing (a client leaking connections), but not once a socket. */
  private noteClosed(): void {
    this.closedSinceLog++
    const now = Date.now()
    if (now - this.lastLog < this.warnEveryMs) return
    this.log.warn('too many idle keep-alive connections; closing the longest idle', {
      cap: this.max,
      closed: this.closedSinceLog,
    })
    this.closedSinceLog = 0
    this.lastLog = now
  }
}
