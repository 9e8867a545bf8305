import { closest } from './edit-distance.js'

/** A flag as a command declares it (oclif's flag definitions, reduced to what a suggestion needs). */
export interface KnownFlag {
  name: string
  hidden?: boolean
}

/** `--dry-run=1` and `--dry-run` are the same flag. */
function flagName(token: string): string {
  return token.replace(/^-+/, '').replace(/=.*$/, '')
}

function suggestionFor(token: string, known: readonly KnownFlag[]): string | undefined {
  const visible = known.filter((f) => !f.hidden)
  // a single dash before a long name is the same mistake as a typo: `-dry-run`
  const typed = flagName(token)
  const exact = visible.find((f) => f.name === typed)
  if (exact) return `--${exact.name}`
  const name = closest(
    typed,
    visible.map((f) => f.name),
  )
  return name ? `--${name}` : undefined
}

/**
 * tutti's message for flags a command does not have, with the closest one it
 * does have: `unknown flag --dryrun; did you mean --dry-run?`. Without a
 * near flag, it says where the command's flags are listed.
 */
export function unknownFlagMessage(tokens: readonly string[], known: readonly KnownFlag[], command: string): string {
  const typed = tokens.map((t) => t.replace(/=.*$/, ''))
  const hints = typed.map((t) => suggestionFor(t, known))
  const help = `see ${command} --help`
  if (typed.length === 1) return `unknown flag ${typed[0]}; ${hints[0] ? `did you mean ${hints[0]}?` : help}`
  const listed = typed.map((t, i) => (hints[i] ? `${t} (did you mean ${hints[i]}?)` : t))
  return `unknown flags ${listed.join(', ')}; ${help}`
}
