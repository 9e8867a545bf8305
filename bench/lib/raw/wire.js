// A keep-alive HTTP/1.1 client on node:net, for the raw client's POSTs.
// node:http's client (Agent, ClientRequest, IncomingMessage, a timer per
// request) cost the bench ≈ 115 µs of CPU a call, more than tutti or the
// floor spend serving it: on two shared cores the instrument then set much
// of the calls/s of every fast row. This one writes a request in one write
// and reads its answer by Content-Length or chunked framing, nothing more.
// Only for servers on loopback that the bench started; it never pipelines.
import net from 'node:net'

/**
 * @typedef {object} WireAnswer
 * @property {number} status
 * @property {Record<string, string>} headers  lower-case names; a repeated header keeps its first value
 * @property {string} text
 */

/**
 * Buffer's own latin1Slice, undocumented but in every Node: ASCII bytes to a string, no TextDecoder.
 * @typedef {Buffer & { latin1Slice(start: number, end: number): string }} Latin1Buffer
 */

const HEAD_END = Buffer.from('\r\n\r\n')
const CRLF = Buffer.from('\r\n')

/** One answer being read off a socket; `feed` returns the answer once it is complete, else undefined. */
class AnswerReader {
  constructor() {
    /** @type {Buffer} */ this.buf = Buffer.alloc(0)
    /** @type {{ status: number, headers: Record<string, string> } | undefined} */ this.head = undefined
    /** @type {'length' | 'chunked' | 'close' | undefined} */ this.mode = undefined
    this.length = 0
    /** @type {Buffer[]} */ this.chunks = []
    this.received = 0
    this.gotBytes = false
  }

  /** @param {Buffer} data */
  feed(data) {
    this.gotBytes = true
    // a body of known length is kept as its chunks and joined once (a 2 MiB tools/list comes in ~30 reads)
    if (this.mode === 'length') return this.lengthBody(data)
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data
    if (!this.head) {
      const end = this.buf.indexOf(HEAD_END)
      if (end < 0) return undefined
      const lines = /** @type {Latin1Buffer} */ (this.buf).latin1Slice(0, end).split('\r\n')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1])
      if (!Number.isInteger(status))
        throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`)
      /** @type {Record<string, string>} */
      const headers = {}
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':')
        if (colon <= 0) continue
        const name = line.slice(0, colon).trim().toLowerCase()
        headers[name] ??= line.slice(colon + 1).trim()
      }
      this.head = { status, headers }
      this.buf = this.buf.subarray(end + 4)
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) this.mode = 'chunked'
      else if (headers['content-length'] !== undefined) {
        this.mode = 'length'
        this.length = Number(headers['content-length'])
      } else if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
        this.mode = 'length'
        this.length = 0
      } else this.mode = 'close'
    }
    if (this.mode === 'length') {
      const rest = this.buf
      this.buf = Buffer.alloc(0)
      return this.lengthBody(rest)
    }
    if (this.mode === 'chunked') return this.chunked()
    return undefined
  }

  /** @param {Buffer} data */
  lengthBody(data) {
    if (data.length) this.chunks.push(data)
    this.received += data.length
    if (this.received < this.length) return undefined
    if (this.received > this.length) throw new Error('bytes after the answer (the bench never pipelines)')
    return this.answer(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks))
  }

  chunked() {
    for (;;) {
      const eol = this.buf.indexOf(CRLF)
      if (eol < 0) return undefined
      const size = parseInt(/** @type {Latin1Buffer} */ (this.buf).latin1Slice(0, eol).split(';')[0], 16)
      if (!Number.isInteger(size) || size < 0) throw new Error('a malformed chunk size')
      if (size === 0) {
        // the last chunk, then optional trailers and an empty line
        const end = this.buf.indexOf(CRLF, eol + 2) === eol + 2 ? eol + 4 : this.buf.indexOf(HEAD_END, eol) + 4
        if (end < 4 || this.buf.length < end) return undefined
        if (this.buf.length > end) throw new Error('bytes after the answer (the bench never pipelines)')
        return this.answer(Buffer.concat(this.chunks))
      }
      if (this.buf.length < eol + 2 + size + 2) return undefined
      this.chunks.push(this.buf.subarray(eol + 2, eol + 2 + size))
      this.buf = this.buf.subarray(eol + 2 + size + 2)
    }
  }

  /** The answer of a body delimited by the connection's end. */
  ended() {
    return this.head && this.mode === 'close' ? this.answer(this.buf) : undefined
  }

  /** @param {Buffer} body */
  answer(body) {
    const { status, headers } = /** @type {NonNullable<AnswerReader['head']>} */ (this.head)
    return {
      status,
      headers,
      text: body.toString('utf8'),
      reusable: this.mode !== 'close' && !/close/i.test(headers.connection ?? ''),
    }
  }
}

/** Idle keep-alive connections to one origin; a request takes one (or opens one) and gives it back. */
export class WirePool {
  /** @param {URL} origin */
  constructor(origin) {
    this.host = origin.hostname
    this.port = Number(origin.port || 80)
    /** @type {net.Socket[]} */ this.idle = []
    this.destroyed = false
  }

  /**
   * @param {{ method: string, path: string, headers: Record<string, string>, body?: string, timeoutMs: number }} req
   * @returns {Promise<WireAnswer>}
   */
  async request(req) {
    const reused = this.idle.pop()
    try {
      return await this.exchange(reused ?? this.open(), req)
    } catch (err) {
      // a kept-alive socket the server closed just as it was taken: once more on a fresh one
      if (reused && /** @type {any} */ (err).beforeAnswer) return this.exchange(this.open(), req)
      throw err
    }
  }

  destroy() {
    this.destroyed = true
    for (const s of this.idle.splice(0)) s.destroy()
  }

  open() {
    const socket = net.connect({ host: this.host, port: this.port })
    socket.setNoDelay(true)
    // an idle socket the server closes leaves the pool
    socket.on('close', () => {
      const i = this.idle.indexOf(socket)
      if (i >= 0) this.idle.splice(i, 1)
    })
    socket.on('error', () => {})
    return socket
  }

  /**
   * @param {net.Socket} socket
   * @param {{ method: string, path: string, headers: Record<string, string>, body?: string, timeoutMs: number }} req
   * @returns {Promise<WireAnswer>}
   */
  exchange(socket, { method, path, headers, body = '', timeoutMs }) {
    return new Promise((resolve, reject) => {
      const reader = new AnswerReader()
      const what = `${method} ${path}`
      /** @param {Error | undefined} err @param {any} [answer] */
      const finish = (err, answer) => {
        clearTimeout(timer)
        socket.off('data', onData)
        socket.off('end', onEnd)
        socket.off('close', onClose)
        socket.off('error', onError)
        if (err) {
          socket.destroy()
          reject(Object.assign(new Error(`${what}: ${err.message}`), { beforeAnswer: !reader.gotBytes }))
          return
        }
        if (answer.reusable && !this.destroyed) this.idle.push(socket)
        else socket.destroy()
        resolve({ status: answer.status, headers: answer.headers, text: answer.text })
      }
      const onData = (/** @type {Buffer} */ data) => {
        let answer
        try {
          answer = reader.feed(data)
        } catch (err) {
          finish(/** @type {Error} */ (err))
          return
        }
        if (answer) finish(undefined, answer)
      }
      const onEnd = () => {
        const answer = reader.ended()
        if (answer) finish(undefined, { ...answer, reusable: false })
      }
      const onClose = () => finish(new Error('connection closed before the answer was complete'))
      const onError = (/** @type {Error} */ err) => finish(err)
      const timer = setTimeout(() => finish(new Error(`no complete answer in ${timeoutMs} ms`)), timeoutMs)
      socket.on('data', onData)
      socket.on('end', onEnd)
      socket.on('close', onClose)
      socket.on('error', onError)
      let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n`
      for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`
      socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    })
  }
}
