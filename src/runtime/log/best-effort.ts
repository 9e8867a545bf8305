import type { Logger } from './logger.js'

/**
 * Work whose failure must not stop the caller (closing a connection that is
 * already gone, removing a temp file), but whose failure is still worth
 * knowing: it is logged with what was being done, never swallowed.
 */
export async function bestEffort<T>(
  work: Promise<T> | (() => Promise<T>),
  log: Logger | undefined,
  what: string,
  fields: Record<string, unknown> = {},
): Promise<T | undefined> {
  try {
    return await (typeof work === 'function' ? work() : work)
  } catch (err) {
    log?.warn(`${what} failed`, { ...fields, error: err })
    return undefined
  }
}
