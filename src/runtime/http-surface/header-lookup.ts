import type { IncomingMessage } from 'node:http'

/**
 * The one thing the guard, the classifier and the fast path ask of request
 * headers, so that a web Request's Headers (the h3 path) and node's own
 * request (the hot path, before h3) are read by the same functions.
 */
export interface HeaderLookup {
  get(name: string): string | null
}

/**
 * Node's headers as a HeaderLookup, or undefined when any header is
 * repeated. Without repeats, node's value of a header is exactly what
 * srvx's Headers (the h3 path) answers: both take it from the same parser,
 * and only repeats are joined differently (node keeps the first Host or
 * Authorization, a web Headers joins them). A request with a repeat goes
 * the h3 way, where it always went.
 */
export function nodeHeaders(req: IncomingMessage): HeaderLookup | undefined {
  const headers = req.headers
  let distinct = 0
  for (const _ in headers) distinct++
  if (distinct * 2 !== req.rawHeaders.length) return undefined
  return {
    get(name: string): string | null {
      const value = headers[name.toLowerCase()]
      return typeof value === 'string' ? value : value === undefined ? null : value.join(', ')
    },
  }
}
