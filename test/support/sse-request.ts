import http from 'node:http'

/**
 * One POST whose answer is read as it arrives: the JSON-RPC messages of an
 * SSE answer one by one (or the one JSON body), so a test can act on a
 * message in the middle of a call (answer a request the server sent on the
 * stream) and still read the end.
 */
export class SseRequest {
  readonly messages: any[] = []
  status = 0
  private buffer = ''
  private waiters: Array<{ ok: (m: any) => boolean; resolve: (m: any) => void }> = []
  private endWaiters: Array<() => void> = []
  private ended = false

  constructor(url: string, headers: Record<string, string>, body: unknown) {
    const u = new URL(url)
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers }, (res) => {
      this.status = res.statusCode ?? 0
      const sse = String(res.headers['content-type'] ?? '').includes('text/event-stream')
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        this.buffer += chunk
        if (sse) this.frames()
      })
      res.on('end', () => {
        if (!sse && this.buffer.trim()) this.push(JSON.parse(this.buffer))
        this.ended = true
        for (const w of this.endWaiters.splice(0)) w()
      })
    })
    req.on('error', () => {
      this.ended = true
      for (const w of this.endWaiters.splice(0)) w()
    })
    req.end(JSON.stringify(body))
  }

  /** The first message (already read or still to come) for which `ok` holds. */
  next(ok: (m: any) => boolean): Promise<any> {
    const seen = this.messages.find(ok)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve) => this.waiters.push({ ok, resolve }))
  }

  /** Every message, once the answer has ended. */
  async done(): Promise<any[]> {
    if (!this.ended) await new Promise<void>((resolve) => this.endWaiters.push(resolve))
    return this.messages
  }

  private frames(): void {
    let at: number
    while ((at = this.buffer.indexOf('\n\n')) >= 0) {
      const frame = this.buffer.slice(0, at)
      this.buffer = this.buffer.slice(at + 2)
      const data = frame
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
      if (data) this.push(JSON.parse(data))
    }
  }

  private push(message: any): void {
    this.messages.push(message)
    for (const w of [...this.waiters])
      if (w.ok(message)) {
        this.waiters.splice(this.waiters.indexOf(w), 1)
        w.resolve(message)
      }
  }
}
