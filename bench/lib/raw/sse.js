// A small server-sent-events parser: `event:` and `data:` fields, comments
// skipped, `\n` or `\r\n` line ends (enough for the servers measured here).

/**
 * @typedef {{ event: string, data: string }} SseEvent
 */

/**
 * An incremental parser: feed it text chunks, it calls `onEvent` per event.
 * @param {(e: SseEvent) => void} onEvent
 * @returns {(chunk: string) => void}
 */
export function sseParser(onEvent) {
  let buf = ''
  let event = ''
  /** @type {string[]} */
  let data = []
  return (chunk) => {
    buf += chunk
    let start = 0
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n', start)) {
      let line = buf.slice(start, nl)
      start = nl + 1
      if (line.endsWith('\r')) line = line.slice(0, -1)
      if (line === '') {
        if (data.length) onEvent({ event: event || 'message', data: data.join('\n') })
        event = ''
        data = []
        continue
      }
      if (line[0] === ':') continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      let value = colon < 0 ? '' : line.slice(colon + 1)
      if (value[0] === ' ') value = value.slice(1)
      if (field === 'event') event = value
      else if (field === 'data') data.push(value)
    }
    buf = buf.slice(start)
  }
}

/**
 * Every event of a complete SSE body.
 * @param {string} text
 * @returns {SseEvent[]}
 */
export function sseEvents(text) {
  /** @type {SseEvent[]} */
  const out = []
  const feed = sseParser((e) => out.push(e))
  feed(text)
  feed('\n\n') // a last event without its blank line still counts
  return out
}
