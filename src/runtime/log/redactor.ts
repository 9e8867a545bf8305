/**
 * Removes secrets from anything about to be logged or shown: by key name, by
 * value pattern (Bearer …) and by the exact value of every token and
 * credential the process knows about.
 */
const SECRET_KEY = /(authorization|token|secret|password|passwd|credential|api[-_]?key|cookie)/i
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi
export const REDACTED = '[redacted]'

export class Redactor {
  private readonly secrets = new Set<string>()

  /** Values shorter than 4 chars are not tracked: redacting them would shred ordinary text. */
  addSecret(value: string | undefined): void {
    if (value && value.length >= 4) this.secrets.add(value)
  }

  removeSecret(value: string | undefined): void {
    if (value) this.secrets.delete(value)
  }

  redactString(text: string): string {
    let out = text.replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED)
    }
    return out
  }

  /** Exact known values only (no key-name rule): for answers whose shape is a contract. */
  redactSecrets<T>(value: T): T {
    if (this.secrets.size === 0) return value
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redactString(v)
      if (Array.isArray(v)) return v.map(walk)
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
      return v
    }
    return walk(value) as T
  }

  redact(value: unknown, depth = 0): unknown {
    if (depth > 8) return '[depth]'
    if (typeof value === 'string') return this.redactString(value)
    if (value instanceof Error) {
      return { name: value.name, message: this.redactString(value.message), code: (value as { code?: unknown }).code }
    }
    if (Array.isArray(value)) return value.map((v) => this.redact(v, depth + 1))
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) {
        out[k] =
          SECRET_KEY.test(k) && v !== undefined && v !== null && typeof v !== 'boolean'
            ? REDACTED
            : this.redact(v, depth + 1)
      }
      return out
    }
    return value
  }
}
