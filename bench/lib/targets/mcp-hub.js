// Peer: mcp-hub (ravitemer): a hub that aggregates configured servers and
// exposes them at /mcp over the HTTP+SSE transport (GET /mcp, POST
// /messages), naming tools `<server>__<tool>`.
//
// Isolation: HOME and the XDG dirs point into the run dir (it writes logs, a
// workspace cache and a marketplace cache there). Its marketplace catalogue
// would be fetched from the internet at start-up (then retried with curl):
// the cache is seeded so it is fresh, a `curl` that always fails is put first
// on PATH, and the net guard blocks any non-loopback connection anyway. It has
// no host option; the net guard binds it to 127.0.0.1.
import fs from 'node:fs'
import path from 'node:path'
import { connectSse, LEGACY } from '../clients.js'
import { EVERYTHING_ENTRY, NODE_MODULES } from '../context.js'
import { startPeer } from '../peer.js'
import { freePort } from '../wait.js'

const SCRIPT = path.join(NODE_MODULES, 'mcp-hub/dist/cli.js')
const SERVER = 'everything'

/** @param {string} file @param {string} text */
function writeFile(file, text, mode = 0o644) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text, { mode })
}

/** @param {import('../context.js').RunContext} ctx */
function prepareHome(ctx) {
  const root = ctx.dir('mcp-hub-home')
  const xdg = {
    HOME: root,
    XDG_DATA_HOME: path.join(root, 'data'),
    XDG_STATE_HOME: path.join(root, 'state'),
    XDG_CONFIG_HOME: path.join(root, 'config'),
    XDG_CACHE_HOME: path.join(root, 'cache'),
  }
  // a fresh, non-empty catalogue: MarketplaceCatalog.isCatalogValid() then skips the fetch
  const now = Date.now()
  const catalogue = {
    registry: {
      version: 'bench',
      generatedAt: now,
      totalServers: 1,
      servers: [{ id: 'bench-placeholder', name: 'placeholder', description: 'seeded by tutti bench' }],
    },
    lastFetchedAt: now,
    serverDocumentation: {},
  }
  writeFile(path.join(xdg.XDG_DATA_HOME, 'mcp-hub/cache/registry.json'), JSON.stringify(catalogue))
  const fakeBin = path.join(root, 'bin')
  writeFile(path.join(fakeBin, 'curl'), '#!/bin/sh\necho "curl disabled by tutti bench" >&2\nexit 1\n', 0o755)
  const config = path.join(root, 'mcp-hub.json')
  writeFile(
    config,
    JSON.stringify(
      { mcpServers: { [SERVER]: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] } } },
      null,
      2,
    ),
  )
  return { env: { ...xdg, PATH: `${fakeBin}${path.delimiter}${ctx.env().PATH}` }, config }
}

/** @param {number} port */
async function hubReady(port) {
  const res = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(2000) })
  if (!res.ok) return false
  const health = /** @type {{ state?: string, servers?: { name: string, status: string, error?: string }[] }} */ (
    await res.json()
  )
  const server = (health.servers ?? []).find((s) => s.name === SERVER)
  if (server?.status === 'disconnected' && server.error) throw new Error(`upstream failed: ${server.error}`)
  return health.state === 'ready' && server?.status === 'connected'
}

/** @type {import('./types.js').TargetDef} */
export const mcpHub = {
  id: 'mcp-hub',
  label: 'mcp-hub',
  async start(ctx) {
    const { env, config } = prepareHome(ctx)
    const port = await freePort()
    const peer = await startPeer(ctx, {
      name: 'mcp-hub',
      script: SCRIPT,
      args: ['--port', String(port), '--config', config],
      env,
      ready: () => hubReady(port),
    })
    return {
      command: peer.command,
      listens: peer.listens,
      gatewayPid: () => peer.proc.pid,
      notes: [
        'HTTP+SSE only (GET /mcp + POST /messages)',
        'bound to 127.0.0.1 by the net guard (no host option)',
        'marketplace fetch suppressed (seeded cache)',
      ],
      variants: [
        {
          era: LEGACY,
          transport: 'sse',
          tool: /^everything__echo$/,
          connect: () => connectSse(`http://127.0.0.1:${port}/mcp`),
          raw: { transport: 'sse', url: `http://127.0.0.1:${port}/mcp` },
        },
      ],
      stop: peer.stop,
    }
  },
}
