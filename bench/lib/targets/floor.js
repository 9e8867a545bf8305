// The floor row: fixtures/floor-server.mjs, a minimal node:http → stdio
// forwarder (id-mapped, no MCP library) in front of the same upstream every
// target has. It runs as its own process, started like a peer, so its CPU per
// call is measured the same way as a gateway's: what any Node gateway must
// at least spend on HTTP, JSON and a pipe.
import { fileURLToPath } from 'node:url'
import { connectStreamableHttp, LEGACY } from '../clients.js'
import { EVERYTHING_ENTRY } from '../context.js'
import { startPeer } from '../peer.js'
import { freePort, tcpOpen } from '../wait.js'

const SCRIPT = fileURLToPath(new URL('../../fixtures/floor-server.mjs', import.meta.url))

/** @type {import('./types.js').TargetDef} */
export const floor = {
  id: 'floor',
  label: 'floor',
  async start(ctx) {
    const port = await freePort()
    const peer = await startPeer(ctx, {
      name: 'floor',
      script: SCRIPT,
      args: ['--port', String(port), '--', process.execPath, EVERYTHING_ENTRY, 'stdio'],
      ready: () => tcpOpen(port),
    })
    const url = `http://127.0.0.1:${port}/mcp`
    return {
      command: peer.command,
      listens: peer.listens,
      gatewayPid: () => peer.proc.pid,
      notes: [
        '2025-06-18, JSON responses only; ' +
          'the child is initialized once, later initialize answered from its cached result',
      ],
      variants: [
        {
          era: LEGACY,
          transport: 'streamable-http',
          tool: 'echo',
          connect: () => connectStreamableHttp(url, { era: LEGACY }),
          raw: { transport: 'streamable-http', url },
        },
      ],
      stop: peer.stop,
    }
  },
}
