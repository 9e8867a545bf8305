import { ErrorCodes, TuttiError } from './errors.js'

/** Short, and without "_": "_" separates the key from the tool name. */
export const CONNECTOR_KEY = /^[a-z][a-z0-9-]{0,23}$/

export const CONNECTOR_KEY_RULE = 'must match ^[a-z][a-z0-9-]{0,23}$ (lowercase, digits, "-", at most 24 chars, no "_")'

/**
 * Every entry point (CLI arguments, control requests) checks a key before it
 * is used in a path or as a property name: `../../x` must never name a
 * directory, nor `__proto__` an object's prototype.
 */
export function assertConnectorKey(key: string): string {
  if (!CONNECTOR_KEY.test(key))
    throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `connector key "${key.slice(0, 64)}" ${CONNECTOR_KEY_RULE}`)
  return key
}
