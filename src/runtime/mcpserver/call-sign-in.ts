import { randomUUID } from 'node:crypto'
import { ErrorCodes, isTuttiError, TuttiError } from '../errors.js'
import type { Logger } from '../log/logger.js'
import { SIGN_IN_WAIT_MS } from '../oauth/sign-in-timeout.js'
import { statePaths } from '../paths.js'
import type { CallCancel } from '../registry/call-cancel.js'
import type { CallRelay } from '../registry/call-relay.js'
import type { MCPToolBinding, RouteSignInTarget } from '../registry/route.js'

/** What the daemon does once a sign-in stored its grant: reconcile the connector and wait for its outcome. */
export type AfterSignIn = (key: string) => Promise<void>

/** Whether `err` (or what it wraps) is the daemon's "needs a new sign-in" (oauth/grant-provider.ts). */
export function needsSignIn(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (isTuttiError(e) && e.code === ErrorCodes.OAUTH_NEEDS_AUTH) return true
  return false
}

/**
 * tutti's own URL-mode elicitation (SEP-1036): a call to an OAuth connector
 * whose grant only the user can restore asks its caller to open the
 * authorization URL, inside the agent, instead of failing with "run `tutti
 * connector connect`". Only for a caller that declared `elicitation.url`
 * (the relay refuses the rest, and the call fails as before); one sign-in
 * per connector at a time. The sign-in is the CLI's own (oauth/sign-in.ts):
 * the daemon's loopback redirect, PKCE, `state` and the grant store; the
 * URL goes to the caller instead of a browser. Then the connector is
 * reconciled and the call made once more. A call that finds the grant lost
 * while a sign-in for its connector is under way waits for that one, and is
 * made once more if it succeeds: the user is asked once.
 */
export class CallSignIn {
  /** By connector, the sign-in under way: whether it succeeded. */
  private readonly running = new Map<string, Promise<boolean>>()

  constructor(
    private readonly after: AfterSignIn,
    private readonly log: Logger,
    private readonly timeoutMs = SIGN_IN_WAIT_MS,
  ) {}

  /** Signed in for this call's connector (true), or nothing was done (false); throws what the user should read. */
  async offer(err: unknown, binding: MCPToolBinding, relay: CallRelay | undefined, cancel: CallCancel) {
    const ask = relay?.request
    const target = binding.client.signInTarget
    if (!ask || !target || !needsSignIn(err)) return false
    const { key, stateRoot, ...signIn } = target
    const underWay = this.running.get(key)
    if (underWay) {
      this.log.info('waiting for the sign-in under way', { connector: key })
      // a caller that goes away stops waiting; its call fails with the error it had
      let stop = () => {}
      const gone = new Promise<boolean>((resolve) => {
        stop = cancel.onCancel(() => resolve(false))
      })
      try {
        return await Promise.race([underWay, gone])
      } finally {
        stop()
      }
    }
    const run = this.signIn(err, key, stateRoot, signIn, ask, cancel)
    this.running.set(
      key,
      run.then(
        () => true,
        () => false,
      ),
    )
    try {
      return await run
    } finally {
      this.running.delete(key)
    }
  }

  /** The sign-in itself, asked of this call's caller; then the connector reconciled. */
  private async signIn(
    err: unknown,
    key: string,
    stateRoot: string,
    signIn: Omit<RouteSignInTarget, 'key' | 'stateRoot'>,
    ask: NonNullable<CallRelay['request']>,
    cancel: CallCancel,
  ): Promise<true> {
    const signal = cancel.signal
    const open = async (url: string): Promise<void> => {
      const params = {
        mode: 'url',
        elicitationId: randomUUID(),
        url,
        message: `${key} needs you to sign in again before this call can go on. Open the link to sign in.`,
      }
      const answer = await ask('elicitation/create', params, signal).catch((refused: unknown) => {
        // a caller that cannot open URLs (or went away) reads the original error, which says how to sign in
        this.log.info('sign-in not asked of the caller', { connector: key, reason: String(refused) })
        throw err
      })
      if (answer.action !== 'accept')
        throw new TuttiError(
          ErrorCodes.OAUTH_SIGN_IN_FAILED,
          `connector "${key}": the sign-in was ${answer.action === 'decline' ? 'declined' : 'cancelled'}; ` +
            `run \`tutti connector connect ${key}\` to sign in later`,
        )
    }
    this.log.info('asking the caller to sign in', { connector: key })
    const print = (line: string) => this.log.debug('sign-in', { connector: key, line: line.split('\n')[0] })
    // the sign-in's code (the SDK's auth) loads only when a caller signs in
    const { OAuthSignIn } = await import('../oauth/sign-in.js')
    await new OAuthSignIn(statePaths(stateRoot), { key, ...signIn }).run({
      env: process.env,
      timeoutMs: this.timeoutMs,
      print,
      open,
    })
    this.log.info('signed in through the caller; reconciling', { connector: key })
    await this.after(key)
    return true
  }
}
