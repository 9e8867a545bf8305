import { stderrSummary } from './stderr-summary.js'

/** What a server that serves HTTP, not stdio, tends to print when it starts ("running on stdio" is not that). */
const SERVES_HTTP = /\bhttps?:\/\/|\blistening\b|\bport\s*:?\s*\d{2,5}\b|\brunning on\b|\bstreamable http\b|\bsse\b/i
const servesHttp = (line: string) => SERVES_HTTP.test(line) && !/\bstdio\b/i.test(line)

/** One line as a message quotes it: trimmed, at most 120 characters. */
const quoted = (line: string) => `"${line.trim().slice(0, 120)}"`

/**
 * Why a stdio server may never have answered initialize, from what it
 * printed meanwhile: many npm servers start an HTTP server unless told
 * otherwise (`--stdio`, a `stdio` argument), and say so on stdout or
 * stderr; one that printed nothing may wait for an argument or a prompt.
 * A `; `-led clause for the timeout's message, or nothing to add.
 */
export function silentStartHint(stdoutLine: string | undefined, stderrTail: string): string {
  const said = [stdoutLine ?? '', ...stderrTail.split('\n').slice(-5)].map((l) => l.trim()).filter(Boolean)
  const http = said.find(servesHttp)
  if (http)
    return (
      `; it printed ${quoted(http)}: it looks like an HTTP server, not a stdio one. Its README may name ` +
      'the argument that selects stdio (often --stdio or stdio, after "--" at install), or install its URL ' +
      'as a remote server'
    )
  if (stdoutLine)
    return `; the first line on its stdout was not JSON-RPC: ${quoted(stdoutLine)}${stderrSummary(stderrTail)}`
  if (stderrTail) return stderrSummary(stderrTail)
  return '; it printed nothing: it may wait for an argument that selects stdio, or for input (see its README)'
}
