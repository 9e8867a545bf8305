import type { DoctorTool, doctorSnapshotMessage } from '../../control-protocol/doctor.js'
import type { ResponseOf } from '../../control-protocol/message.js'
import type { DaemonContext } from '../context.js'
import { toDoctorConnector } from '../../reconcile/snapshot-views.js'
import { handleAvailable } from './available.js'

export async function handleDoctorSnapshot(ctx: DaemonContext): Promise<ResponseOf<typeof doctorSnapshotMessage>> {
  await ctx.initialReconcile()
  const tools: DoctorTool[] = []
  for (const t of ctx.registry.list()) {
    const binding = ctx.registry.resolve(t.localName)!
    const tool: DoctorTool = {
      localName: t.localName,
      connector: binding.connectorKey,
      generation: binding.generation,
      inputSchema: t.inputSchema,
    }
    if (t.description !== undefined) tool.description = t.description
    tools.push(tool)
  }
  return {
    connectors: ctx.reconciler.snapshots().map(toDoctorConnector),
    tools,
    available: await handleAvailable(ctx, {}),
  }
}
