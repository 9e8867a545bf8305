/**
 * Which environment variables and headers are credentials (issue 21, item 3).
 * Any one of these makes it one: the source marks it secret, its name looks
 * like a key, or it is a header value (a source's "not secret" never
 * overrides the name: a leak costs more than a hidden setting). Credentials go to the 0600 store and are
 * redacted everywhere; only what is none of these may become a public setting.
 */
/** An environment variable name, as POSIX shells accept it. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

const CREDENTIAL_NAME = /(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE)/i
/** PAT only as a whole word (GITLAB_PAT), or every *_PATH would be a secret. */
const PAT_WORD = /(^|_)PAT(_|$)/i

export interface VariableMarks {
  /** The source says so (server.json `isSecret`, VS Code `password: true`, `--secret`). */
  markedSecret?: boolean
  /** The value is sent as an HTTP header. */
  header?: boolean
}

/** Whether a name looks like a key, a token or a password. */
export function looksLikeCredential(name: string): boolean {
  return CREDENTIAL_NAME.test(name) || PAT_WORD.test(name)
}

/** Whether a variable is a credential: marked secret, named like one, or a header value. */
export function isCredential(name: string, marks: VariableMarks = {}): boolean {
  return marks.markedSecret === true || marks.header === true || looksLikeCredential(name)
}
