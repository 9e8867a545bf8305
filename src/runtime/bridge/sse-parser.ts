/**
 * `text/event-stream` as the daemon writes it: each event's `data` lines
 * (joined with a newline, per the SSE rules) as soon as the event is
 * complete. Comments (keep-alives), `event:` and `id:` lines carry nothing
 * a stdio client gets.
 */
export class SseParser {
  /** The text of a line not yet ended: a 2 MiB data line arrives in many chunks, joined once. */
  private partial: string[] = []
  private data: string[] = []

  push(text: string): string[] {
    if (!text.includes('\n')) {
      this.partial.push(text)
      return []
    }
    const joined = this.partial.length ? this.partial.join('') + text : text
    this.partial = []
    const out: string[] = []
    let start = 0
    for (let nl = joined.indexOf('\n'); nl >= 0; nl = joined.indexOf('\n', start)) {
      let line = joined.slice(start, nl)
      start = nl + 1
      if (line.endsWith('\r')) line = line.slice(0, -1)
      if (line === '') {
        if (this.data.length) out.push(this.data.join('\n'))
        this.data = []
      } else if (line.startsWith('data:')) this.data.push(line.slice(line[5] === ' ' ? 6 : 5))
    }
    if (start < joined.length) this.partial.push(joined.slice(start))
    return out
  }
}
