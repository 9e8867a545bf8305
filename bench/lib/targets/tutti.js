// tutti: the example `everything` connector installed into an isolated
// state dir, reached through the daemon's `connector` MCP server with the URL
// and headers `tutti session prepare` returns, in both protocol eras.
import path from 'node:path'
import { connectStreamableHttp, LEGACY, MODERN } from '../clients.js'
import { REPO } from '../context.js'
import { daemonPid, stopDaemon, tutti } from '../tutti-cli.js'

const EXAMPLE = path.join(REPO, 'examples/connectors/everything')

/**
 * `tutti session prepare` → the `connector` server binding.
 * @param {import('../tutti-cli.js').TuttiEnv} t
 * @param {string} session
 */
export async function prepareSession(t, session) {
  const runtime = await tutti(t, [
    'session',
    'prepare',
    '--provider',
    'tutti-agent',
    '--workspace',
    'bench',
    '--session',
    session,
  ])
  const server = runtime?.mcpServers?.find((/** @type {{ name: string }} */ s) => s.name === 'connector')
  if (!server?.url)
    throw new Error(`session prepare returned no "connector" MCP server: ${JSON.stringify(runtime).slice(0, 200)}`)
  return { url: String(server.url), headers: /** @type {Record<string, string>} */ (server.headers ?? {}) }
}

/**
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {string | RegExp} tool
 * @returns {import('./types.js').Variant[]}
 */
export function tuttiVariants(url, headers, tool) {
  const raw = { transport: /** @type {const} */ ('streamable-http'), url, headers }
  return [MODERN, LEGACY].map((era) => ({
    era,
    transport: 'streamable-http',
    tool,
    connect: () => connectStreamableHttp(url, { era, headers }),
    raw,
  }))
}

/**
 * A tutti build as a target: its CLI installs the example connector into a state dir of its own, and its daemon
 * serves it.
 * @param {string} id @param {string} label @param {string} stateSub
 * @param {(ctx: import('../context.js').RunContext) => string | undefined} binOf  undefined: this checkout's
 * @returns {import('./types.js').TargetDef}
 */
function tuttiBuild(id, label, stateSub, binOf) {
  return {
    id,
    label,
    async start(ctx) {
      const bin = binOf(ctx)
      const t = { ctx, stateDir: ctx.dir(stateSub), bin }
      const cli = bin ? `node ${bin}` : 'tutti'
      try {
        await tutti(t, ['connector', 'install', EXAMPLE])
        await tutti(t, ['connector', 'connect', 'everything', '--from-env', 'EVERYTHING_API_KEY'], {
          EVERYTHING_API_KEY: 'bench',
        })
        const { url, headers } = await prepareSession(t, 'bench-1')
        return {
          command:
            `${cli} connector install ${path.relative(REPO, EXAMPLE)}; ${cli} connector connect everything; ` +
            `${cli} session prepare → ${url}`,
          variants: tuttiVariants(url, headers, 'everything_echo'),
          gatewayPid: () => daemonPid(t.stateDir),
          stop: () => stopDaemon(t),
        }
      } catch (err) {
        await stopDaemon(t)
        throw new Error(`not available yet (${err instanceof Error ? err.message : err})`)
      }
    },
  }
}

export const tuttiTarget = tuttiBuild('tutti', 'tutti', 'tutti-state', () => undefined)

/** The baseline build (BENCH_BASELINE), beside this one with the same connector and requests. */
export const tuttiBaseTarget = tuttiBuild('tutti-base', 'tutti-base', 'tutti-base-state', (ctx) => {
  if (!ctx.cfg.baseline) throw new Error('BENCH_BASELINE is not set')
  return ctx.cfg.baseline.bin
})
