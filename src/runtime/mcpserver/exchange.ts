import type { AuthInfo } from '@modelcontextprotocol/server'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { SessionView } from '../sessions/session-view.js'
import type { McpRequest } from './classify.js'
import type { ToolOutcome } from './tool-service.js'

/**
 * What the endpoint hands the SDK handlers for one request: its
 * classification, the session (by token hash), and, when the fast path has
 * already made the call, the outcome for the SDK to encode.
 */
export interface McpExchange {
  readonly request: McpRequest
  readonly session: string
  /** What the session sees (its token's view). */
  readonly view: SessionView
  readonly settled?: ToolOutcome
}

const KEY = 'tutti.exchange'

/*
 * `authInfo` is the one value createMcpHandler passes to the server factory
 * untouched, in both eras, so the exchange travels in it. The token field
 * carries the session's hash, never the token.
 */
export function exchangeAuth(exchange: McpExchange): AuthInfo {
  return { token: exchange.session, clientId: exchange.session, scopes: [], extra: { [KEY]: exchange } }
}

export function exchangeOf(auth: AuthInfo | undefined): McpExchange {
  const exchange = auth?.extra?.[KEY] as McpExchange | undefined
  // the factory is only ever called through the endpoint, which always sets it
  if (!exchange)
    throw new TuttiError(ErrorCodes.INTERNAL, 'an MCP request reached the SDK handler without its classification')
  return exchange
}
