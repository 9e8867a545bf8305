import type { Hook, Interfaces } from '@oclif/core'
import { ErrorCodes } from '../../runtime/errors.js'
import { editDistance } from '../edit-distance.js'
import { unknownFlagMessage } from '../unknown-flag.js'

export { editDistance } from '../edit-distance.js'

/**
 * How far a typed id (':'-separated words) is from a command id. When more words
 * were typed than the id has, the extra ones may be arguments, so the leading
 * words alone count too.
 */
function distance(typed: string[], id: string): number {
  const words = id.split(':')
  let best = editDistance(typed.join(':'), id)
  if (typed.length > words.length) best = Math.min(best, editDistance(typed.slice(0, words.length).join(':'), id))
  return best
}

/**
 * The public command a mistyped id most likely meant, or undefined. Only `publicIds`
 * are ever suggested; when a hidden command is strictly nearer, the user meant that
 * one, so nothing is suggested rather than an unrelated public command.
 */
export function suggestCommand(
  typed: string,
  publicIds: readonly string[],
  hiddenIds: readonly string[] = [],
): string | undefined {
  const words = typed.split(':').filter(Boolean)
  if (words.length === 0) return undefined
  let best: { id: string; d: number } | undefined
  for (const id of publicIds) {
    const d = distance(words, id)
    // a typo or two, more for longer ids; an unrelated word is far beyond this
    if (d > Math.max(2, Math.floor(id.length / 4))) continue
    if (!best || d < best.d) best = { id, d }
  }
  if (!best) return undefined
  const nearestHidden = Math.min(...hiddenIds.map((id) => distance(words, id)))
  return nearestHidden < best.d ? undefined : best.id
}

/** The words of the command the user typed, however oclif split them between id and argv. */
function typedWords(id: string, argv: readonly string[]): string[] {
  const tokens = [...(id.startsWith('-') ? [id] : id.split(':')), ...argv]
  const start = tokens.findIndex((t) => !t.startsWith('-'))
  if (start < 0) return []
  const end = tokens.findIndex((t, i) => i > start && t.startsWith('-'))
  return tokens.slice(start, end < 0 ? undefined : end)
}

/**
 * tutti's answer to a command that does not exist, for this hook and for help
 * (cli/help.ts): exit 2, `tutti: ...` on stderr, or `{"error":{...}}` on
 * stdout with --json.
 */
export function reportCommandNotFound(
  words: string[],
  typedId: string,
  json: boolean,
  config: Interfaces.Config,
): void {
  reportBadInput(notFoundMessage(words, typedId, config), json, config)
}

/** `tutti --bogus`: a flag where a command was expected is an unknown flag of `tutti` itself. */
const ROOT_FLAGS = [{ name: 'help' }, { name: 'version' }]

function notFoundMessage(words: string[], typedId: string, config: Interfaces.Config): string {
  if (words.length === 0 && typedId.startsWith('-')) return unknownFlagMessage([typedId], ROOT_FLAGS, config.bin)
  const visible = config.commands.filter((c) => !c.hidden).map((c) => c.id)
  const hidden = config.commands.filter((c) => c.hidden).map((c) => c.id)
  const suggestion = suggestCommand(words.join(':'), visible, hidden)
  const typed = words.length > 0 ? words.join(' ') : typedId
  let message = `command "${typed}" not found`
  if (suggestion) message += `. Did you mean "${config.bin} ${suggestion.split(':').join(config.topicSeparator)}"?`
  return message
}

function reportBadInput(message: string, json: boolean, config: Interfaces.Config): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: { code: ErrorCodes.ARGUMENT_INVALID, message } }, null, 2)}\n`)
  } else {
    process.stderr.write(`${config.bin}: ${message}\n`)
  }
  // set, not process.exit(): stdout/stderr drain before the process ends
  process.exitCode = 2
}

/**
 * Replaces oclif's "command x:y not found" (and @oclif/plugin-not-found, which would
 * suggest hidden commands) with tutti's error shape.
 */
const hook: Hook.CommandNotFound = async ({ id, argv = [], config }) => {
  reportCommandNotFound(typedWords(id, argv), id, [id, ...argv].includes('--json'), config)
}

export default hook
