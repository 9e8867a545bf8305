import { readFileSync } from 'node:fs'
import { ErrorCodes, isTuttiError } from '../runtime/errors.js'
import { REDACTED } from '../runtime/log/redactor.js'

/**
 * What every tutti command prints, in one place for both ways a command is
 * answered: through oclif (base-command.ts) and the lean `connector available`
 * entry (available-entry.ts). Both print through these functions, so their
 * bytes cannot drift apart. Nothing here loads oclif.
 */

/** Values of credentials.json (at least 4 chars, as the daemon's redactor tracks them). */
function storedSecrets(file: string): string[] {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { connectors?: Record<string, Record<string, unknown>> }
    return Object.values(doc.connectors ?? {})
      .flatMap((vars) => Object.values(vars ?? {}))
      .filter((v): v is string => typeof v === 'string' && v.length >= 4)
  } catch {
    return []
  }
}

/**
 * Every stored credential, by exact value: no output of any command carries
 * one, whatever an upstream echoed into a message (the daemon redacts its
 * answers too; this covers what the CLI itself prints). credentials.json is
 * read once, on the first text that is printed.
 */
export class OutputRedactor {
  private secrets?: string[]

  constructor(private readonly credentialsFile: () => string) {}

  redact(text: string): string {
    this.secrets ??= storedSecrets(this.credentialsFile())
    let out = text
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
    return out
  }
}

/** `--json` output of a successful command: indented, one trailing newline, redacted. */
export function jsonText(value: unknown, redactor: OutputRedactor): string {
  return `${redactor.redact(JSON.stringify(value, null, 2))}\n`
}

export interface Failure {
  code: string
  /** 2: bad input the caller can fix; 1: a failure of tutti or an upstream. */
  exit: number
}

/** A TuttiError's own code and exit code; anything else is INTERNAL (1). */
export function failureOf(err: unknown): Failure {
  return isTuttiError(err) ? { code: err.code, exit: err.exitCode } : { code: ErrorCodes.INTERNAL, exit: 1 }
}

/**
 * The one error shape: `{"error":{"code","message"}}` on stdout with `--json`,
 * `tutti: <message>` on stderr without; the message redacted, without oclif's
 * help hint.
 */
export function errorOutput(err: Error, failure: Failure, json: boolean, redactor: OutputRedactor): { stream: 'stdout' | 'stderr'; text: string } {
  const message = redactor.redact(err.message.replace(/\n\s*See more help with --help$/, ''))
  if (json) return { stream: 'stdout', text: `${JSON.stringify({ error: { code: failure.code, message } }, null, 2)}\n` }
  return { stream: 'stderr', text: `tutti: ${message}\n` }
}
