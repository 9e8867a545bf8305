// N copies of the npm memory server (@modelcontextprotocol/server-memory, nine
// tools) as connectors under different keys, and the same servers as a plain
// `--mcp-config` for Claude Code: the agent sections compare the two on the
// same processes. Both run the same command (node_modules/.bin/mcp-server-memory,
// `#!/usr/bin/env node`: one node process per server), each with its own
// MEMORY_FILE_PATH, so no two servers share a file.
import fs from 'node:fs'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { BIN_DIR } from './context.js'
import { pool } from './list-section.js'
import { stopDaemon, tutti } from './tutti-cli.js'

export const MEMORY_BIN = path.join(BIN_DIR, 'mcp-server-memory')
export const MEMORY_TOOLS = 9

/** @param {number} i */
export const memoryKey = (i) => `mem-${String(i).padStart(2, '0')}`

/**
 * Connector directories mem-00 … for `tutti connector install <dir>`.
 * @param {string} outDir @param {number} count
 */
export function writeMemoryConnectors(outDir, count) {
  const out = []
  for (let i = 0; i < count; i++) {
    const key = memoryKey(i)
    const dir = path.join(outDir, key)
    fs.mkdirSync(dir, { recursive: true })
    const manifest = {
      schemaVersion: 1,
      key,
      name: `Memory ${String(i).padStart(2, '0')}`,
      version: '1.0.0',
      description: `knowledge graph ${key} (npm @modelcontextprotocol/server-memory)`,
      auth: { kind: 'none' },
      mcp: {
        transport: 'stdio',
        command: 'mcp-server-memory',
        env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/memory.jsonl' },
      },
    }
    fs.writeFileSync(path.join(dir, 'tutti-connector.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    out.push({ key, dir })
  }
  return out
}

/**
 * The same servers as a Claude Code `--mcp-config` (each a stdio server).
 * @param {number} count @param {string} dataDir  where each writes its graph
 */
export function plainMcpConfig(count, dataDir) {
  /** @type {Record<string, { command: string, args: string[], env: Record<string, string> }>} */
  const mcpServers = {}
  for (let i = 0; i < count; i++) {
    const key = memoryKey(i)
    mcpServers[key] = { command: MEMORY_BIN, args: [], env: { MEMORY_FILE_PATH: path.join(dataDir, `${key}.jsonl`) } }
  }
  return { mcpServers }
}

/**
 * Install `count` memory connectors into t's state dir (each install waits for
 * its first start, which lists the tools into the cache), then restart the
 * daemon: a daemon started with every tool table cached runs no upstream
 * until a call (lazy by cache). Returns the install time.
 * @param {import('./tutti-cli.js').TuttiEnv} t
 * @param {number} count
 * @param {(line: string) => void} progress
 * @param {string} label
 */
export async function installMemoryConnectors(t, count, progress, label) {
  const made = writeMemoryConnectors(t.ctx.dir(`${path.basename(t.stateDir)}-connectors`), count)
  const t0 = performance.now()
  await pool(made, t.ctx.cfg.installConcurrency, async ({ dir }) => {
    await tutti(t, ['connector', 'install', dir])
  })
  const installMs = performance.now() - t0
  progress(`${label}: ${count} memory connectors installed in ${(installMs / 1000).toFixed(1)} s`)
  progress(`${label}: ${await stopDaemon(t)}`)
  return { keys: made.map((m) => m.key), installMs }
}
