import type { IncomingMessage } from 'node:http'
import type { McpRequest } from './classify.js'
import type { ToolOutcome } from './tool-service.js'

/**
 * A request the node front (node-front.ts) has read, and perhaps made the
 * call of, but leaves to the h3 path to answer: the SDK encodes it, or its
 * refusal is the h3 path's. What was decided on the node side travels with
 * it, so the h3 path neither reads nor classifies the request a second time
 * (nor makes the call twice).
 */
export interface Handover {
  /** The session token's hash: the token was verified by the same function the h3 path uses. */
  readonly session: string
  /** The parsed JSON-RPC message, or the error that answers the request. */
  readonly message: Record<string, unknown> | Response
  readonly request?: McpRequest
  /** The call, already made, for the SDK to encode. */
  readonly settled?: ToolOutcome
}

const HANDED_OVER = new WeakMap<IncomingMessage, Handover>()

type NodeBackedRequest = Request & { runtime?: { node?: { req?: unknown } } }

export function handOver(req: IncomingMessage, handover: Handover): void {
  HANDED_OVER.set(req, handover)
}

/** The handover of the node request behind a web Request (srvx keeps it), taken once. */
export function takeHandover(req: Request): Handover | undefined {
  const node = (req as NodeBackedRequest).runtime?.node?.req as IncomingMessage | undefined
  if (!node) return undefined
  const handover = HANDED_OVER.get(node)
  if (handover) HANDED_OVER.delete(node)
  return handover
}
