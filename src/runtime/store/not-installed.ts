import { closest } from '../edit-distance.js'
import { ErrorCodes, TuttiError } from '../errors.js'

/**
 * A key that names no installed connector: the message says what is installed, or the key it is most likely a
 * typo of (the key of `npm:@scope/server-x` is `x`, not `server-x`, and a user guesses).
 */
export function notInstalled(key: string, installed: readonly string[]): TuttiError {
  const near = closest(key, installed) ?? installed.find((k) => key.endsWith(`-${k}`) || k.endsWith(`-${key}`))
  const hint = near
    ? `; did you mean "${near}"?`
    : installed.length
      ? ` (installed: ${[...installed].sort().join(', ')})`
      : ' (no connector is installed)'
  return new TuttiError(ErrorCodes.CONNECTOR_NOT_INSTALLED, `connector "${key}" is not installed${hint}`)
}
