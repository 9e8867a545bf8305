import type { healthMessage } from '../../control-protocol/health.js'
import type { ResponseOf } from '../../control-protocol/message.js'
import { CONTROL_PROTOCOL_VERSION } from '../../control-protocol/version.js'
import { PRODUCT_VERSION } from '../../version.js'
import type { DaemonContext } from '../context.js'

export async function handleHealth(ctx: DaemonContext): Promise<ResponseOf<typeof healthMessage>> {
  return {
    pid: process.pid,
    productVersion: PRODUCT_VERSION,
    protocolVersion: CONTROL_PROTOCOL_VERSION,
    stateDir: ctx.paths.root,
    startedAt: ctx.startedAt.toISOString(),
    nonce: ctx.identity.nonce,
    ...(ctx.identity.processStart ? { processStart: ctx.identity.processStart } : {}),
  }
}
