import type { Hook } from '@oclif/core'
import { ErrorCodes } from '../../runtime/errors.js'

/**
 * Edit distance counting an adjacent transposition as one edit (optimal string
 * alignment): "availabel" is one typo away from "available", not two.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

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
export function suggestCommand(typed: string, publicIds: readonly string[], hiddenIds: readonly string[] = []): string | undefined {
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
 * Replaces oclif's "command x:y not found" (and @oclif/plugin-not-found, which would
 * suggest hidden commands) with tutti's error shape: exit 2, `tutti: ...` on stderr or
 * `{"error":{...}}` on stdout with --json.
 */
const hook: Hook.CommandNotFound = async function ({ id, argv = [], config }) {
  const words = typedWords(id, argv)
  const visible = config.commands.filter((c) => !c.hidden).map((c) => c.id)
  const hidden = config.commands.filter((c) => c.hidden).map((c) => c.id)
  const suggestion = suggestCommand(words.join(':'), visible, hidden)
  const typed = words.length > 0 ? words.join(' ') : id
  let message = `command "${typed}" not found`
  if (suggestion) message += `. Did you mean "${config.bin} ${suggestion.split(':').join(config.topicSeparator)}"?`
  if ([id, ...argv].includes('--json')) {
    process.stdout.write(`${JSON.stringify({ error: { code: ErrorCodes.ARGUMENT_INVALID, message } }, null, 2)}\n`)
  } else {
    process.stderr.write(`${config.bin}: ${message}\n`)
  }
  // set, not process.exit(): stdout/stderr drain before the process ends
  process.exitCode = 2
}

export default hook
