import type { Logger } from '../log/logger.js'
import { MAX_RESULT_BYTES_LIMITS } from '../manifest/schema.js'
import { MAX_RESULT_BYTES_ENV } from '../names.js'
import type { MCPToolBinding, ToolCallResult } from '../registry/route.js'
import { cutResult } from './result-cut.js'
import { fitsWithin, measuredBytes } from './result-size.js'
import { ResultStore } from './result-store.js'

/**
 * The cap on a tool result, in bytes of its JSON without escapes (result-size.ts;
 * docs/output-caps.md).
 *
 * 100,000 by default: Claude Code (2.1) cuts MCP tool output of more than
 * MAX_MCP_OUTPUT_TOKENS (25,000 tokens by default) to its first 4 × 25,000 =
 * 100,000 characters of text, and the rest is lost. A result of at most
 * 100,000 bytes has at most 100,000 characters (a character is at least one
 * byte), so Claude Code keeps it whole, and what tutti cut stays readable
 * through the link. `TUTTI_MAX_RESULT_BYTES` sets it for the daemon; a
 * connector's `mcp.maxResultBytes` for its own tools.
 */
export const DEFAULT_MAX_RESULT_BYTES = 100_000

/** The daemon's cap: TUTTI_MAX_RESULT_BYTES if it is a whole number in bounds (else the default, logged). */
export function daemonResultCap(env: NodeJS.ProcessEnv = process.env, log?: Logger): number {
  const text = env[MAX_RESULT_BYTES_ENV]
  if (text === undefined || text === '') return DEFAULT_MAX_RESULT_BYTES
  const n = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN
  const { min, max } = MAX_RESULT_BYTES_LIMITS
  if (n >= min && n <= max) return n
  log?.warn(`${MAX_RESULT_BYTES_ENV} is not a whole number of bytes from ${min} to ${max}; the default applies`, {
    value: text.slice(0, 32),
    default: DEFAULT_MAX_RESULT_BYTES,
  })
  return DEFAULT_MAX_RESULT_BYTES
}

export class ResultCaps {
  constructor(
    /** The cap of a connector whose manifest says none. */
    readonly defaultBytes: number = DEFAULT_MAX_RESULT_BYTES,
    readonly store: ResultStore = new ResultStore(),
  ) {}

  /**
   * The result as the session gets it: itself when it fits the binding's
   * cap, else cut (result-cut.ts) with its whole kept for `session`. A
   * result of ordinary size costs one bounded walk that reads no string
   * (result-size.ts); only one that may be near or over the cap is measured,
   * and nothing is serialized for it.
   */
  apply(result: ToolCallResult, binding: MCPToolBinding, session: string | undefined): ToolCallResult {
    const cap = binding.maxResultBytes ?? this.defaultBytes
    if (fitsWithin(result, cap)) return result
    // a result the SDK would not send as complete (another resultType) is not a tool's answer to cut
    if (result.resultType !== undefined && result.resultType !== 'complete') return result
    const total = measuredBytes(result)
    if (total <= cap) return result
    const kept = session ? this.store.put(session, result, total, cap) : { unkept: 'no session' }
    return cutResult(result, {
      cap,
      total,
      typed: binding.tool.outputSchema !== undefined,
      tool: binding.tool.localName,
      ...('uri' in kept ? { link: { uri: kept.uri, minutes: this.store.minutes } } : { unkept: kept.unkept }),
    })
  }
}
