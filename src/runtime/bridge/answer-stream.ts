import type { IncomingMessage } from 'node:http'
import { SseParser } from './sse-parser.js'

/**
 * The JSON-RPC messages of one daemon answer, each as soon as it is there:
 * the body of a JSON answer, every event of an event stream. Throws when
 * the answer is cut off (the daemon went away while answering).
 */
export async function* answerMessages(response: IncomingMessage, contentType: string): AsyncGenerator<string> {
  response.setEncoding('utf8')
  if (contentType.includes('text/event-stream')) {
    const parser = new SseParser()
    for await (const text of response as AsyncIterable<string>) yield* parser.push(text)
    return
  }
  let body = ''
  for await (const text of response as AsyncIterable<string>) body += text
  if (body.trim() !== '') yield body
}

/**
 * One message as one stdio line. The daemon's JSON has no raw newline; a
 * message that has one (pretty-printed, or an SSE event of several data
 * lines) is written again on one line.
 */
export function asLine(payload: string): string {
  return payload.includes('\n') || payload.includes('\r') ? JSON.stringify(JSON.parse(payload)) : payload
}
