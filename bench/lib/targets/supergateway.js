// Peer: supergateway (supercorp-ai): stdio → Streamable HTTP. Run --stateful:
// one stdio child per MCP session. Its default stateless mode (and its
// 2026-07-28 leg) spawns a fresh stdio child for every POST, which measures
// process start-up, not proxying, so they are not benchmarked here.
// Logging is off (--logLevel none); at "info" it prints every message.
import path from 'node:path'
import { connectStreamableHttp, LEGACY } from '../clients.js'
import { EVERYTHING_ENTRY, NODE_MODULES } from '../context.js'
import { startPeer } from '../peer.js'
import { freePort, tcpOpen } from '../wait.js'

const SCRIPT = path.join(NODE_MODULES, 'supergateway/dist/index.js')

/** @param {string} s */
const sh = (s) => `'${s.replaceAll("'", `'\\''`)}'`

/** @type {import('./types.js').TargetDef} */
export const supergateway = {
  id: 'supergateway',
  label: 'supergateway',
  async start(ctx) {
    const port = await freePort()
    const peer = await startPeer(ctx, {
      name: 'supergateway',
      script: SCRIPT,
      args: [
        '--stdio',
        `${sh(process.execPath)} ${sh(EVERYTHING_ENTRY)} stdio`,
        '--outputTransport',
        'streamableHttp',
        '--stateful',
        '--port',
        String(port),
        '--logLevel',
        'none',
      ],
      ready: () => tcpOpen(port),
    })
    const url = `http://127.0.0.1:${port}/mcp`
    return {
      command: peer.command,
      listens: peer.listens,
      gatewayPid: () => peer.proc.pid,
      notes: [
        '--stateful (stateless mode and the 2026-07-28 leg spawn a stdio child per request)',
        'bound to 127.0.0.1 by the net guard (no host option)',
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
