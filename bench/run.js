#!/usr/bin/env node
// `npm run bench`: builds tutti (the npm script does), then measures the same
// upstream (server-everything's echo over stdio) reached directly, through
// tutti in both protocol eras, and through mcp-proxy, supergateway and
// mcp-hub (with the SDK client, and for HTTP targets again with a raw
// node:http client); then tools/list through tutti with 100 connectors × 50 tools.
// Prints the tables, writes bench/results/latest.json. See bench/README.md.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCallSection } from './lib/call-section.js'
import { loadConfig } from './lib/config.js'
import { createContext, NODE_MODULES, REPO } from './lib/context.js'
import { runListSection } from './lib/list-section.js'
import { reapLeftovers, stopAll } from './lib/procs.js'
import { renderCallSection, renderListSection } from './lib/report.js'

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url))
const startedAt = Date.now()
const progress = (line) => process.stderr.write(`[bench +${((Date.now() - startedAt) / 1000).toFixed(1)}s] ${line}\n`)

function versionOf(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(NODE_MODULES, pkg, 'package.json'), 'utf8')).version
  } catch {
    return 'missing'
  }
}

function gitHead() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8', timeout: 5000 }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO, encoding: 'utf8', timeout: 5000 }).trim() !== ''
    return dirty ? `${head}+dirty` : head
  } catch {
    return 'unknown'
  }
}

function environment() {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    tutti: gitHead(),
    packages: Object.fromEntries(
      ['@modelcontextprotocol/client', '@modelcontextprotocol/server', '@modelcontextprotocol/server-everything', 'mcp-proxy', 'supergateway', 'mcp-hub'].map((p) => [p, versionOf(p)]),
    ),
  }
}

let ctx
let cleaning
/** Stop every group we spawned, then reap anything of this run that is still alive. */
async function cleanup() {
  cleaning ??= (async () => {
    const stopped = await stopAll()
    for (const s of stopped) progress(`stopped leftover group ${s.name} (${s.pid}): ${s.how}`)
    if (!ctx) return { found: [], survivors: [] }
    const reaped = await reapLeftovers(ctx.runId, ctx.runRoot)
    for (const p of reaped.found) progress(`killed leftover process ${p.pid}: ${p.cmd.slice(0, 160)}`)
    for (const p of reaped.survivors) progress(`STILL ALIVE: ${p.pid}: ${p.cmd.slice(0, 160)}`)
    if (!ctx.cfg.keepTmp) fs.rmSync(ctx.runRoot, { recursive: true, force: true })
    else progress(`kept ${ctx.runRoot}`)
    return reaped
  })()
  return cleaning
}

for (const sig of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.once(sig, () => {
    progress(`${sig}: cleaning up`)
    cleanup().finally(() => process.exit(130))
  })
}

async function main() {
  const cfg = loadConfig()
  ctx = createContext(cfg)
  progress(`run ${ctx.runId} in ${ctx.runRoot}${cfg.quick ? ' (quick mode)' : ''}`)
  const results = { startedAt: new Date(startedAt).toISOString(), config: { ...cfg }, environment: environment(), call: undefined, list: undefined, processes: undefined }
  let exitCode = 0
  try {
    if (cfg.sections.includes('call')) results.call = await runCallSection(ctx, progress)
    if (cfg.sections.includes('list')) results.list = await runListSection(ctx, progress)
  } catch (err) {
    progress(`harness error: ${err instanceof Error ? err.stack : err}`)
    results.error = String(err instanceof Error ? err.message : err)
    exitCode = 1
  } finally {
    const reaped = await cleanup()
    results.processes = { leftoversKilled: reaped.found.length, survivors: reaped.survivors.map((p) => `${p.pid} ${p.cmd}`) }
    if (reaped.survivors.length) exitCode = 1
  }
  results.finishedAt = new Date().toISOString()

  const out = []
  const env = results.environment
  out.push(`tutti bench: node ${env.node}, ${env.cpus} × ${env.cpuModel}, tutti ${env.tutti}; mcp-proxy ${env.packages['mcp-proxy']}, supergateway ${env.packages.supergateway}, mcp-hub ${env.packages['mcp-hub']}`)
  if (results.call) out.push('', renderCallSection(results.call, cfg))
  if (results.list) out.push('', renderListSection(results.list, cfg))
  const proc = results.processes
  out.push('', proc.survivors.length ? `processes: ${proc.survivors.length} STILL ALIVE after cleanup: ${proc.survivors.join('; ')}` : `processes: none left over${proc.leftoversKilled ? ` (${proc.leftoversKilled} killed during cleanup)` : ''}`)
  process.stdout.write(`${out.join('\n')}\n`)

  fs.mkdirSync(RESULTS_DIR, { recursive: true })
  const file = path.join(RESULTS_DIR, 'latest.json')
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  progress(`wrote ${path.relative(process.cwd(), file)}`)
  return exitCode
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    progress(`fatal: ${err instanceof Error ? err.stack : err}`)
    await cleanup().catch(() => {})
    process.exit(1)
  },
)
