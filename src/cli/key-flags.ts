import { Flags } from '@oclif/core'
import { ErrorCodes, TuttiError } from '../runtime/errors.js'
import type { GivenKey } from '../runtime/manifest/given-keys.js'

/**
 * `--env NAME=VALUE`, `--from-env NAME`, `--secret NAME`: a connector's keys,
 * on `install` and `connect`. Values are read here, in the CLI process: they
 * reach the daemon's server only through the 0600 store, never an argv.
 */
export const keyFlags = (env: string) => ({
  // multipleNonGreedy: one value per flag, so `--secret A npm:x` leaves npm:x the source
  env: Flags.string({
    description: env,
    multiple: true,
    multipleNonGreedy: true,
    default: [],
    helpValue: 'NAME=VALUE',
  }),
  'from-env': Flags.string({
    description: "take NAME's value from this shell's environment",
    multiple: true,
    multipleNonGreedy: true,
    default: [],
    helpValue: 'NAME',
  }),
  secret: Flags.string({
    description:
      'a credential NAME whose value is typed at a prompt (not echoed), or read as one line of stdin ' +
      '(one line per --secret, in order)',
    multiple: true,
    multipleNonGreedy: true,
    default: [],
    helpValue: 'NAME',
  }),
})

const invalid = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

export async function readKeys(flags: { env: string[]; 'from-env': string[]; secret: string[] }): Promise<GivenKey[]> {
  const keys: GivenKey[] = []
  for (const pair of flags.env) {
    const eq = pair.indexOf('=')
    if (eq <= 0) throw invalid(`--env expects NAME=VALUE, got "${pair.slice(0, Math.max(eq, 0)) || '(no name)'}=…"`)
    keys.push({ name: pair.slice(0, eq), value: pair.slice(eq + 1), secret: false, flag: '--env' })
  }
  for (const name of flags['from-env']) {
    const value = process.env[name]
    if (value === undefined) throw invalid(`--from-env ${name}: the variable is not set in this environment`)
    keys.push({ name, value, secret: false, flag: '--from-env' })
  }
  if (flags.secret.length) {
    const values = process.stdin.isTTY ? await promptEach(flags.secret) : await stdinLines(flags.secret.length)
    flags.secret.forEach((name, i) => {
      const value = values[i] ?? ''
      const why = process.stdin.isTTY ? 'nothing was typed' : 'stdin has no line for it'
      if (value === '') throw invalid(`--secret ${name}: no value (${why})`)
      keys.push({ name, value, secret: true, flag: '--secret' })
    })
  }
  return keys
}

/** `n` lines of a piped stdin (a CRLF's CR dropped); fewer when it ends first. */
async function stdinLines(n: number): Promise<string[]> {
  let text = ''
  for await (const chunk of process.stdin) {
    text += (chunk as Buffer).toString('utf8')
    if (text.split('\n').length > n) break
  }
  return text
    .split('\n')
    .slice(0, n)
    .map((l) => l.replace(/\r$/, ''))
}

/** Each value typed at a prompt on stderr, with echo off (raw mode). */
async function promptEach(names: readonly string[]): Promise<string[]> {
  const out: string[] = []
  for (const name of names) out.push(await promptHidden(`${name}: `))
  return out
}

function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin
  process.stderr.write(prompt)
  stdin.setRawMode(true)
  stdin.resume()
  return new Promise((resolve, reject) => {
    let value = ''
    const done = (err?: Error) => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write('\n')
      if (err) reject(err)
      else resolve(value)
    }
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done()
        if (ch === '\u0003') return done(invalid('--secret: cancelled'))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else if (ch >= ' ') value += ch
      }
    }
    stdin.on('data', onData)
  })
}
