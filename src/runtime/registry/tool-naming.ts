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

/** `<key>_<tool>`, with invalid chars → "_" and, when too long, cut + "_" + hash of the upstream name. */
export function localToolName(connectorKey: string, upstreamName: string): string {
  let tool = ''
  for (const ch of upstreamName) tool += INVALID.test(ch) ? '_' : ch
  const full = `${connectorKey}_${tool}`
  if (full.length <= MAX_LOCAL_NAME) return full
  return `${full.slice(0, MAX_LOCAL_NAME - HASH_CHARS - 1)}_${shortHash(upstreamName)}`
}
