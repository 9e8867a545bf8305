import type { RequestOf, ResponseOf } from '../../control-protocol/message.js'
import type { stopMessage } from '../../control-protocol/stop.js'
import type { DaemonContext } from '../context.js'

export async function handleStop(
  ctx: DaemonContext,
  req: RequestOf<typeof stopMessage>,
): Promise<ResponseOf<typeof stopMessage>> {
  // answer first, then stop: the caller waits for the pid to exit
  setImmediate(() => ctx.requestStop('control stop', { revokeSessions: req.revokeSessions }))
  return { stopping: true }
}
