import type { IncomingMessage } from 'node:http'

type NodeBackedRequest = Request & { runtime?: { node?: { req?: IncomingMessage } } }

/**
 * Read a request body up to `limit` bytes; undefined when it is larger.
 * Under Node the underlying IncomingMessage is read directly: converting it
 * to a web stream first costs more than the rest of a small request.
 */
export async function readBodyLimited(req: Request, limit: number): Promise<string | undefined> {
  const declared = Number(req.headers.get('content-length') ?? '0')
  if (declared > limit) return undefined
  const node = (req as NodeBackedRequest).runtime?.node?.req
  if (node && !node.readableEnded) return readNode(node, limit)
  if (!req.body) return ''
  const reader = req.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function readNode(stream: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > limit) {
        stream.off('data', onData)
        stream.resume() // drain the rest so the connection can answer 413
        resolve(undefined)
        return
      }
      chunks.push(chunk)
    }
    stream.on('data', onData)
    stream.once('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')))
    stream.once('error', reject)
  })
}
