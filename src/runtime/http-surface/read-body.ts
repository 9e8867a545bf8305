import type { IncomingMessage, ServerResponse } from 'node:http'
import { HTTP_LIMITS } from './http-limits.js'

type NodeContext = { req?: unknown; res?: unknown }
type NodeBackedRequest = Request & { runtime?: { node?: NodeContext } }

/** The body, or why there is none: larger than the limit, or the client went away before it ended. */
export type BodyRead = { ok: true; text: string } | { ok: false; reason: 'too-large' | 'incomplete' }

const TOO_LARGE: BodyRead = { ok: false, reason: 'too-large' }
const INCOMPLETE: BodyRead = { ok: false, reason: 'incomplete' }

/**
 * Read a request body up to `limit` bytes. Under Node the underlying
 * IncomingMessage is read directly: converting it to a web stream first
 * costs more than the rest of a small request. Past the limit nothing more is
 * read: the 413 closes the connection (closeIfBodyUnread).
 */
export async function readBodyLimited(req: Request, limit: number): Promise<BodyRead> {
  const declared = Number(req.headers.get('content-length') ?? '0')
  if (declared > limit) return TOO_LARGE
  const node = (req as NodeBackedRequest).runtime?.node?.req as IncomingMessage | undefined
  if (node && !node.readableEnded) return readNode(node, limit)
  if (!req.body) return { ok: true, text: '' }
  const reader = req.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>
    try {
      next = await reader.read()
    } catch {
      return INCOMPLETE // the client went away; nobody will read the answer
    }
    if (next.done) break
    size += next.value.byteLength
    if (size > limit) {
      await reader.cancel()
      return TOO_LARGE
    }
    chunks.push(next.value)
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') }
}

/** Read node's request body up to `limit` bytes; past it, nothing more is taken off the wire. */
export function readNode(stream: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const settle = (outcome: BodyRead): void => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onGone)
      resolve(outcome)
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      stream.pause() // stop reading: the rest of the body is never taken off the wire
      settle(TOO_LARGE)
    }
    const onEnd = (): void => settle({ ok: true, text: Buffer.concat(chunks).toString('utf8') })
    // aborted by the client or by the request timeout: not a daemon failure, and nobody reads the answer
    const onGone = (): void => settle(INCOMPLETE)
    stream.on('data', onData)
    stream.once('end', onEnd)
    stream.once('error', onGone)
  })
}

/**
 * Called with every response before it is written. A request whose body has
 * not fully arrived by then (refused by the guard, a 401 or 404 answered
 * without reading, a 413) is answered with `Connection: close`, and nothing
 * more of it is read: node would otherwise read and discard the whole rest of
 * the body to keep the connection alive, however large it is.
 */
export function closeIfBodyUnread(node: NodeContext | undefined): void {
  const req = node?.req as IncomingMessage | undefined
  const res = node?.res as ServerResponse | undefined
  if (!req || !res || req.complete || res.headersSent) return
  const socket = req.socket
  // reading once marks the body as taken (node dumps a body nobody read); paused, at most one
  // buffer of it comes off the wire
  req.pause()
  req.read(0)
  res.setHeader('connection', 'close')
  // node ends a Connection: close response with socket.destroySoon(): a FIN, then a reset the moment
  // it is flushed, which a client still sending often meets before it has read the answer. As Go's
  // net/http does: the FIN now, nothing read, the reset a moment later (or when the client goes first).
  socket.destroySoon = () => {
    socket.end()
    const timer = setTimeout(() => socket.destroy(), HTTP_LIMITS.refusedLingerMs).unref()
    socket.once('close', () => clearTimeout(timer))
  }
}
