import { spawn } from 'node:child_process'
import which from 'which'
import { ErrorCodes, TuttiError } from '../errors.js'
import { unsafeOAuthUrl } from './oauth-endpoints.js'

/** The OS's own opener, tried when neither `--browser` nor `$BROWSER` names one. */
const OS_OPENERS: Partial<Record<NodeJS.Platform, string>> = {
  linux: 'xdg-open',
  freebsd: 'xdg-open',
  openbsd: 'xdg-open',
  darwin: 'open',
}

/**
 * Which command opens the authorization URL: `--browser`, else `$BROWSER`, else the OS opener if it is on PATH;
 * undefined: print only.
 */
export async function browserCommand(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  if (flag) return flag
  if (env.BROWSER) return env.BROWSER
  const opener = OS_OPENERS[platform]
  return opener ? ((await which(opener, { nothrow: true, path: env.PATH ?? '' })) ?? undefined) : undefined
}

/**
 * Start `command` with the URL as its one argument (no shell: the URL's `&`
 * stays a character). The sign-in does not wait for it: the redirect is
 * what counts. Its failure to start is reported, and the printed URL still
 * works. Only a URL the sign-in may use (oauth-endpoints.ts) is ever opened,
 * whoever asks.
 */
export function openBrowser(
  command: string,
  url: string,
  env: NodeJS.ProcessEnv,
  report: (line: string) => void,
): void {
  const unsafe = unsafeOAuthUrl(url)
  if (unsafe) throw new TuttiError(ErrorCodes.OAUTH_SIGN_IN_FAILED, `${url} is not opened: ${unsafe}`)
  const child = spawn(command, [url], { stdio: 'ignore', env, detached: false })
  child.once('error', (err) =>
    report(`could not start the browser command ${command}: ${err.message}; open the URL above yourself`),
  )
  child.unref()
}
