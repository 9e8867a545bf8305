import { readFileSync } from 'node:fs'
import { ErrorCodes, isTuttiError } from '../runtime/errors.js'
import { REDACTED } from '../runtime/log/redactor.js'

/**
 * What every tutti command prints, in one place for both ways a command is
 * answered: through oclif (base-command.ts) and the lean `connector available`
 * entry (available-entry.ts). Both print through these functions, so their
 * bytes cannot drift apart. Nothing here loads oclif.
 */

/** A state file's JSON, or undefined when it is absent or unreadable (nothing of it can be printed then). */
function readJson(file: string): { connectors?: Record<string, unknown> } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { connectors?: Record<string, unknown> }
  } catch {
    // absent, or torn by a crash: nothing of it is printed, as the doc comment says
    return undefined
  }
}

/**
 * The secret fields of an OAuth grant (oauth/grant-store.ts GRANT_SECRET_FIELDS; not imported: this runs on the lean
 * path without zod).
 */
const GRANT_SECRET_FIELDS = new Set(['access_token', 'refresh_token', 'id_token', 'client_secret'])

function grantLeaves(value: unknown, out: string[]): void {
  if (!value || typeof value !== 'object') return
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string' && GRANT_SECRET_FIELDS.has(k)) out.push(v)
    else grantLeaves(v, out)
  }
}

/**
 * Values of credentials.json and the secrets of oauth-grants.json (at least 4 chars, as the daemon's redactor tracks
 * them).
 */
function storedSecrets(files: StoredSecretFiles): string[] {
  const values: string[] = []
  for (const vars of Object.values(readJson(files.credentials)?.connectors ?? {})) {
    for (const v of Object.values((vars ?? {}) as Record<string, unknown>)) if (typeof v === 'string') values.push(v)
  }
  if (files.grants) grantLeaves(readJson(files.grants)?.connectors, values)
  return values.filter((v) => v.length >= 4)
}

export interface StoredSecretFiles {
  credentials: string
  grants?: string
}

/**
 * Every stored credential and OAuth token, by exact value: no output of any
 * command carries one, whatever an upstream echoed into a message (the
 * daemon redacts its answers too; this covers what the CLI itself prints).
 * The files are read once, on the first text that is printed.
 */
export class OutputRedactor {
  private secrets?: string[]

  constructor(private readonly files: () => StoredSecretFiles) {}

  redact(text: string): string {
    this.secrets ??= storedSecrets(this.files())
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
export function errorOutput(
  err: Error,
  failure: Failure,
  json: boolean,
  redactor: OutputRedactor,
): { stream: 'stdout' | 'stderr'; text: string } {
  const message = redactor.redact(err.message.replace(/\n\s*See more help with --help$/, ''))
  if (json)
    return { stream: 'stdout', text: `${JSON.stringify({ error: { code: failure.code, message } }, null, 2)}\n` }
  return { stream: 'stderr', text: `tutti: ${message}\n` }
}
