import { CONNECTOR_KEY, CONNECTOR_KEY_RULE } from '../connector-key.js'
import { ErrorCodes, TuttiError } from '../errors.js'

/** Words that say "this is an MCP server" and nothing about which: `@scope/server-weather` is "weather". */
const NOISE = [/^mcp-server-/, /^server-/, /^mcp-/, /-mcp-server$/, /-server-mcp$/, /-mcp$/, /-server$/]

/**
 * A connector key from a package, plugin or server name: the last path part
 * (no npm scope, no reverse-DNS namespace), lowercased, without the MCP
 * noise words, other characters as "-". `--key` overrides it.
 */
export function deriveKey(name: string, override?: string): string {
  if (override !== undefined) {
    if (!CONNECTOR_KEY.test(override))
      throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `--key "${override.slice(0, 64)}" ${CONNECTOR_KEY_RULE}`)
    return override
  }
  let key = (name.split('/').pop() ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
  for (const noise of NOISE) {
    const stripped = key.replace(noise, '')
    if (stripped !== key && stripped.length > 0) key = stripped
  }
  key = key
    .replace(/^[^a-z]+/, '')
    .slice(0, 24)
    .replace(/-$/, '')
  if (!CONNECTOR_KEY.test(key))
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `no connector key can be made from the name "${name.slice(0, 64)}"; ` +
        `choose one with --key (it ${CONNECTOR_KEY_RULE})`,
    )
  return key
}
