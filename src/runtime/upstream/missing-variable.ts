import { looksLikeCredential } from '../manifest/credential-names.js'
import { RESERVED_VAR_PREFIX } from '../names.js'

/**
 * A server that exits because a variable is missing says so on stderr in
 * its own words ("SLACK_BOT_TOKEN is not set", "Please set
 * GITHUB_PERSONAL_ACCESS_TOKEN", "Missing required environment variable:
 * X"). The reason then names the flag that supplies it.
 */
const SAYS_MISSING = new RegExp(
  [
    "not set|isn't set|is unset|missing|required|undefined",
    'please (set|provide|define)|must (be )?(set|provided|defined)',
    'not (defined|provided|configured|found)|no .{0,40}(provided|configured|set)',
  ].join('|'),
  'i',
)
/** An environment-style name: capitals with at least one underscore (HTTP or MCP alone name no variable). */
const VARIABLE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g
/** Names that are not the server's to ask for. */
const NOT_ASKED = /^(NODE_|NPM_|PATH$|HOME$)/
/** At most this many names in one hint: more is a dump, not a hint. */
const MAX_NAMES = 4

export function missingVariables(stderr: string): string[] {
  const names = new Set<string>()
  for (const line of stderr.split('\n')) {
    if (!SAYS_MISSING.test(line)) continue
    for (const [name] of line.matchAll(VARIABLE)) {
      if (!name.startsWith(RESERVED_VAR_PREFIX) && !NOT_ASKED.test(name)) names.add(name)
    }
  }
  return [...names].slice(0, MAX_NAMES)
}

/** `; run tutti connector connect K --env X=… (or --secret X)`, or '' when stderr names no missing variable. */
export function missingVariableHint(key: string, stderr: string): string {
  const names = missingVariables(stderr)
  if (!names.length) return ''
  const flags = names.map((n) => `--env ${n}=…`).join(' ')
  const secrets = names.filter((n) => looksLikeCredential(n)).map((n) => `--secret ${n}`)
  return `; run tutti connector connect ${key} ${flags}${secrets.length ? ` (or ${secrets.join(' ')})` : ''}`
}
