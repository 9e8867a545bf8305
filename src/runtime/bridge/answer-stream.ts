import type { IncomingMessage } from 'node:http'
import { ErrorCodes, TuttiError } from '../errors.js'
import { SseParser } from './sse-parser.js'
import type { StdoutBacklog } from './stdout-backlog.js'

/**
 * The JSON-RPC messages of one daemon answer, each handed to `onMessage` as
 * soon as it is there: the body of a JSON answer, every event of an event
 * stream (`onMessage` returning 'stop' ends the reading). Resolves at the
 * answer's end; rejects when it is cut off (the daemon went away while
 * answering). Events rather than an async iterator: this is the bridge's
 * hot path, once per call. With `backlog`, the answer is read no further
 * while the client has too much unread (it waits in the socket).
 */
export function readMessages(
  response: IncomingMessage,
  contentType: string,
  onMessage: (payload: string) => void | 'stop',
  backlog?: StdoutBacklog,
): Promise<void> {
  return new Promise((resolve, reject) => {
    response.setEncoding('utf8')
    const sse = contentType.includes('text/event-stream') ? new SseParser() : undefined
    let body = ''
    let stopped = false
    response.on('data', (text: string) => {
      if (stopped) return
      if (backlog?.full) {
        response.pause()
        backlog.onDrain(() => response.resume())
      }
      if (!sse) {
        body += text
        return
      }
      for (const payload of sse.push(text)) {
        if (onMessage(payload) === 'stop') {
          stopped = true
          response.destroy()
          return resolve()
        }
      }
    })
    response.once('end', () => {
      if (stopped) return
      if (!sse && body.trim() !== '') onMessage(body)
      resolve()
    })
    response.once('error', (err) => reject(err))
    response.once('close', () => {
      if (!stopped && !response.complete)
        reject(new TuttiError(ErrorCodes.DAEMON_UNREACHABLE, 'the answer was cut off'))
    })
  })
}

/**
 * One message as one stdio line. The daemon's JSON has no raw newline; a
 * message that has one (pretty-printed, or an SSE event of several data
 * lines) is written again on one line.
 */
export function asLine(payload: string): string {
  return payload.includes('\n') || payload.includes('\r') ? JSON.stringify(JSON.parse(payload)) : payload
}
