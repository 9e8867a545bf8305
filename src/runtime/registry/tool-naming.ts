import { createHash } from 'node:crypto'

/**
 * The one place local tool names are made. Clients show connector tools as
 * `mcp__connector__<local>` and reject names over 64 chars, so a local name
 * is at most 48 chars of [A-Za-z0-9_-]. Names map back by table, never by
 * splitting on "_".
 */
export const MAX_LOCAL_NAME = 48
const HASH_CHARS = 8
const INVALID = /[^A-Za-z0-9_-]/

export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_CHARS)
}

const sanitized = (name: string): string => {
  let tool = ''
  for (const ch of name) tool += INVALID.test(ch) ? '_' : ch
  return tool
}

/** At most MAX_LOCAL_NAME: when too long, cut + "_" + hash of the upstream name. */
function fitted(full: string, upstreamName: string): string {
  if (full.length <= MAX_LOCAL_NAME) return full
  return `${full.slice(0, MAX_LOCAL_NAME - HASH_CHARS - 1)}_${shortHash(upstreamName)}`
}

/** `<key>_<tool>`, with invalid chars → "_" and, when too long, cut + "_" + hash of the upstream name. */
export function localToolName(connectorKey: string, upstreamName: string): string {
  return fitted(`${connectorKey}_${sanitized(upstreamName)}`, upstreamName)
}

/**
 * The names a connector's tools are published under. A tool the server
 * already names `<key>_…` (`slack_post_message` of connector `slack`) is
 * published as it is, not as `slack_slack_post_message`, unless another of
 * its tools is published under that name by the plain rule (a `post_message`
 * beside it): that one keeps its name, and the prefixed tool keeps the
 * double prefix. So no tool's name depends on whether another tool strips.
 */
export function publishedToolNames(connectorKey: string, upstreamNames: readonly string[]): Map<string, string> {
  const plain = new Map(upstreamNames.map((n) => [n, localToolName(connectorKey, n)]))
  const taken = new Set(plain.values())
  const prefix = `${connectorKey}_`
  const out = new Map<string, string>()
  for (const [name, local] of plain) {
    const tool = sanitized(name)
    const own = tool.length > prefix.length && tool.startsWith(prefix) ? fitted(tool, name) : undefined
    out.set(name, own !== undefined && !taken.has(own) ? own : local)
  }
  return out
}
