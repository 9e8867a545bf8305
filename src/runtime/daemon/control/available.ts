import { buildAvailable, type AvailableInput } from '../../available/build-available.js'
import type { AvailableResult } from '../../protocol/available.js'
import type { DaemonContext } from '../context.js'

export async function handleAvailable(ctx: DaemonContext): Promise<AvailableResult> {
  const listed = await ctx.store.list()
  const inputs = listed.map((c): AvailableInput => {
    const state = ctx.reconciler.state(c.installed.key)
    // a connector installed behind the daemon's back is reported as starting until reconciled
    const status = state?.status ?? 'starting'
    return { key: c.installed.key, name: c.installed.name, release: c.release, mcpStatus: status, cliStatus: status }
  })
  return buildAvailable(inputs)
}
