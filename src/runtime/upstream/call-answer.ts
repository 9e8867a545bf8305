import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { META } from '../mcp-wire.js'

/**
 * What a direct tools/call (direct-calls.ts) must decide about the answer
 * without the SDK client's zod schemas, decided exactly as the SDK would.
 * test/runtime/call-answer.test.ts holds both predicates to the SDK's own
 * verdicts, message by message.
 */

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

function onlyKeys(o: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const k in o) if (!allowed.includes(k)) return false
  return true
}

const isRequestId = (id: unknown): boolean => typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id))

/**
 * How the SDK's Protocol routes a message: `result` when it passes
 * isJSONRPCResultResponse, `error` when it passes isJSONRPCErrorResponse
 * (both strict: no other key), else `other` (a request, a notification, or
 * something the SDK reports as unknown).
 */
export function answerKind(message: JSONRPCMessage): 'result' | 'error' | 'other' {
  const m = message as Record<string, unknown>
  if (m.jsonrpc !== '2.0') return 'other'
  if ('result' in m) {
    if (!onlyKeys(m, ['jsonrpc', 'id', 'result']) || !isRequestId(m.id) || !isPlainObject(m.result)) return 'other'
    const meta = m.result._meta
    return meta === undefined || isPlainObject(meta) ? 'result' : 'other'
  }
  if ('error' in m) {
    if (!onlyKeys(m, ['jsonrpc', 'id', 'error']) || (m.id !== undefined && !isRequestId(m.id))) return 'other'
    const e = m.error
    return isPlainObject(e) && typeof e.code === 'number' && Number.isInteger(e.code) && typeof e.message === 'string'
      ? 'error'
      : 'other'
  }
  return 'other'
}

/** Keys of a tools/call result in the order the SDK's schema writes them. */
const RESULT_KEYS = ['_meta', 'content', 'structuredContent', 'isError'] as const

/** A record the SDK copies key by key, keeping the order (`__proto__` would not survive the copy). */
const plainRecord = (v: unknown): v is Record<string, unknown> => isPlainObject(v) && !Object.hasOwn(v, '__proto__')

/**
 * A 2025-era tools/call result that the SDK client's decoding hands back
 * unchanged: its keys in the schema's order, nothing the schema drops,
 * reorders, lifts or rejects (only text content, no resultType, no key the
 * schema does not name). Anything else is decoded by the SDK itself.
 */
export function isCanonicalCallResult(result: Record<string, unknown>): boolean {
  let at = 0
  for (const key in result) {
    while (at < RESULT_KEYS.length && RESULT_KEYS[at] !== key) at++
    if (at === RESULT_KEYS.length) return false
    at++
  }
  const { _meta: meta, content, structuredContent, isError } = result
  if (!Array.isArray(content)) return false
  if (
    meta !== undefined &&
    !(plainRecord(meta) && !Object.hasOwn(meta, 'progressToken') && !Object.hasOwn(meta, META.relatedTask))
  )
    return false
  if (structuredContent !== undefined && !plainRecord(structuredContent)) return false
  if (isError !== undefined && typeof isError !== 'boolean') return false
  for (const block of content) {
    if (!isPlainObject(block) || block.type !== 'text' || typeof block.text !== 'string') return false
    let n = 0
    for (const k in block) if (k !== (n++ === 0 ? 'type' : 'text') || n > 2) return false
  }
  return true
}
