import { buildAvailable, type AvailableInput } from '../../available/build-available.js'
import type { AvailableResult } from '../../protocol/available.js'
import type { DaemonContext } from '../context.js'

const AVAILABLE_WAIT_MS = 5_000

export async function handleAvailable(ctx: DaemonContext): Promise<AvailableResult> {
  // answer from reconciled state, not from the moment a fresh daemon came up; but the public
  // command never waits long on a slow upstream: what is still building is reported as starting
  await Promise.race([ctx.initialReconcile(), new Promise((r) => setTimeout(r, AVAILABLE_WAIT_MS).unref())])
  const listed = await ctx.store.list()
  // the public view never shows where the state lives, nor a secret the daemon knows
  const scrub = (text: string | undefined): string | undefined => (text === undefined ? undefined : ctx.log.redactor.redactString(text).split(ctx.paths.root).join('<state>'))
  const inputs = listed.map((c): AvailableInput => {
    const state = ctx.reconciler.state(c.installed.key)
    // a connector installed behind the daemon's back is reported as starting until reconciled
    const mcpStatus = state?.status ?? 'starting'
    // the CLI does not depend on the MCP upstream: only on auth and a readable release
    const cliStatus = !c.release ? 'failed' : (state?.cli ?? (mcpStatus === 'needs-auth' ? 'needs-auth' : 'starting'))
    const mcpReason = scrub(state?.reason ?? (state ? undefined : 'not reconciled yet'))
    const cliReason = scrub(cliStatus === 'needs-auth' || !c.release ? state?.reason : state?.cliReason)
    return { key: c.installed.key, name: c.installed.name, release: c.release, mcpStatus, cliStatus, ...(mcpReason ? { mcpReason } : {}), ...(cliReason ? { cliReason } : {}) }
  })
  return buildAvailable(inputs)
}
