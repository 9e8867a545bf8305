// Direct stdio, the baseline: server-everything spawned by the SDK v2 client over stdio.
import { connectStdio, LEGACY } from '../clients.js'
import { EVERYTHING_ENTRY } from '../context.js'
import { RUN_MARKER } from '../procs.js'

/** @type {import('./types.js').TargetDef} */
export const directStdio = {
  id: 'direct',
  label: 'direct stdio',
  async start(ctx) {
    const cwd = ctx.dir('direct')
    return {
      command: `${process.execPath} ${EVERYTHING_ENTRY} stdio  (StdioClientTransport)`,
      variants: [
        {
          era: LEGACY,
          transport: 'stdio',
          tool: 'echo',
          connect: () =>
            connectStdio({
              command: process.execPath,
              args: [EVERYTHING_ENTRY, 'stdio'],
              env: { [RUN_MARKER]: ctx.runId },
              cwd,
            }),
        },
      ],
      // the SDK transport owns the child; client.close() ends it
      stop: async () => {},
    }
  },
}
