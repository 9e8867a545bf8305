/** Read a request body up to `limit` bytes; undefined when it is larger. */
export async function readBodyLimited(req: Request, limit: number): Promise<string | undefined> {
  const declared = Number(req.headers.get('content-length') ?? '0')
  if (declared > limit) return undefined
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
