// Peer: mcp-proxy (punkpeye): spawns the stdio server once and multiplexes every
// downstream connection onto it. Streamable HTTP at /mcp; it serves both the
// 2025 era (sessionful) and 2026-07-28 (per request) on the same URL.
import path from 'node:path'
import { connectStreamableHttp, LEGACY, MODERN } from '../clients.js'
import { EVERYTHING_ENTRY, NODE_MODULES } from '../context.js'
import { startPeer } from '../peer.js'
import { freePort, tcpOpen } from '../wait.js'

const SCRIPT = path.join(NODE_MODULES, 'mcp-proxy/dist/bin/mcp-proxy.mjs')

/** @type {import('./types.js').TargetDef} */
export const mcpProxy = {
  id: 'mcp-proxy',
  label: 'mcp-proxy',
  async start(ctx) {
    const port = await freePort()
    const peer = await startPeer(ctx, {
      name: 'mcp-proxy',
      script: SCRIPT,
      args: [
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--server',
        'stream',
        '--',
        process.execPath,
        EVERYTHING_ENTRY,
        'stdio',
      ],
      ready: () => tcpOpen(port),
    })
    const url = `http://127.0.0.1:${port}/mcp`
    return {
      command: peer.command,
      listens: peer.listens,
      gatewayPid: () => peer.proc.pid,
      variants: [LEGACY, MODERN].map((era) => ({
        era,
        transport: 'streamable-http',
        tool: 'echo',
        connect: () => connectStreamableHttp(url, { era }),
        raw: { transport: 'streamable-http', url },
      })),
      stop: peer.stop,
    }
  },
}
