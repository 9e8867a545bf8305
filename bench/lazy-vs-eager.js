#!/usr/bin/env node
// Daemon start-to-ready time and memory with 50 lazy connectors against 50
// eager ones (the same fault-fixture server; lazy ones declare its tools).
// "Ready" = `tutti daemon start` returned, which waits for the start-up
// reconcile. RSS of the daemon alone and of the daemon plus its upstreams.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const repo = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const count = Number(process.env.BENCH_LAZY_CONNECTORS ?? 50)
const rounds = Number(process.env.BENCH_LAZY_ROUNDS ?? 3)
const { ConnectorStore } = await import(pathToFileURL(path.join(repo, 'dist/runtime/store/connector-store.js')).href)
const installerModule = pathToFileURL(path.join(repo, 'dist/runtime/install/connector-installer.js')).href
const { ConnectorInstaller } = await import(installerModule)
const { statePaths } = await import(pathToFileURL(path.join(repo, 'dist/runtime/paths.js')).href)

/** @param {string} f */
const sdk = (f) => pathToFileURL(path.join(repo, 'node_modules/@modelcontextprotocol/server/dist', f)).href
const server = fs.readFileSync(path.join(repo, 'test/fixtures/fault-server.mjs'), 'utf8')
const tools = JSON.parse(fs.readFileSync(path.join(repo, 'test/fixtures/fault-tools.json'), 'utf8'))
const source = server
  .replaceAll('__SDK_SERVER__', sdk('index.mjs'))
  .replaceAll('__SDK_STDIO__', sdk('stdio.mjs'))
  .replace('__TOOLS__', JSON.stringify(tools))

/** @param {string} root @param {string} key @param {boolean} lazy */
function connectorDir(root, key, lazy) {
  const dir = path.join(root, key)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'server.mjs'), source)
  const mcp = {
    transport: 'stdio',
    command: 'node',
    args: ['server.mjs'],
    ...(lazy ? { activation: 'lazy', tools } : {}),
  }
  fs.writeFileSync(
    path.join(dir, 'tutti-connector.json'),
    JSON.stringify({ schemaVersion: 1, key, name: key, version: '1.0.0', mcp }),
  )
  return dir
}

/** @param {number} pid */
const rssKb = (pid) => {
  try {
    // no VmRSS line (a zombie): the TypeError is caught below
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/** @type {RegExpExecArray} */ (/VmRSS:\s+(\d+)/.exec(status))[1])
  } catch {
    return 0
  }
}
/** @param {number} pid */
const children = (pid) =>
  fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const s = fs.readFileSync(`/proc/${n}/stat`, 'utf8')
        return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) === pid
      } catch {
        return false
      }
    })
    .map(Number)
/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** @param {boolean} lazy */
async function measure(lazy) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `tutti-bench-${lazy ? 'lazy' : 'eager'}-`))
  const stateDir = path.join(root, 'state')
  const paths = statePaths(stateDir)
  const installer = new ConnectorInstaller(paths, new ConnectorStore(paths))
  for (let i = 0; i < count; i++) {
    const dir = connectorDir(path.join(root, 'src'), `c-${String(i).padStart(3, '0')}`, lazy)
    await installer.install(dir, { env: process.env })
  }
  const env = { ...process.env, TUTTI_STATE_DIR: stateDir }
  /** @param {string[]} args */
  const tutti = (...args) =>
    execFileSync(process.execPath, [path.join(repo, 'bin', 'run.js'), ...args], { env, encoding: 'utf8' })
  const results = []
  try {
    for (let r = 0; r < rounds; r++) {
      const t = process.hrtime.bigint()
      /** @type {{ pid: number, connectors: { status: string }[] }} */
      const status = JSON.parse(tutti('daemon', 'start', '--json'))
      const ms = Number(process.hrtime.bigint() - t) / 1e6
      const kids = children(status.pid)
      results.push({
        ms,
        daemonRssMb: rssKb(status.pid) / 1024,
        totalRssMb: (rssKb(status.pid) + kids.reduce((a, p) => a + rssKb(p), 0)) / 1024,
        upstreams: kids.length,
        ready: status.connectors.filter((c) => c.status === 'ready').length,
      })
      tutti('daemon', 'stop')
    }
  } finally {
    spawnSync(process.execPath, [path.join(repo, 'bin', 'run.js'), 'daemon', 'stop'], { env })
    fs.rmSync(root, { recursive: true, force: true })
  }
  return {
    ms: median(results.map((r) => r.ms)),
    daemonRssMb: median(results.map((r) => r.daemonRssMb)),
    totalRssMb: median(results.map((r) => r.totalRssMb)),
    upstreams: results[0].upstreams,
    ready: results[0].ready,
  }
}

const lazy = await measure(true)
const eager = await measure(false)
process.stdout.write(`\n${count} connectors, daemon start → ready (medians of ${rounds})\n`)
const HEADER = [
  'activation',
  'start→ready ms',
  'daemon RSS MB',
  'daemon+upstreams RSS MB',
  'upstream processes',
  'ready',
]
process.stdout.write(`${HEADER.join('  ')}\n`)
for (const [label, r] of /** @type {const} */ ([
  ['lazy', lazy],
  ['eager', eager],
])) {
  const cells = [
    label.padEnd(10),
    r.ms.toFixed(0).padStart(13),
    r.daemonRssMb.toFixed(1).padStart(13),
    r.totalRssMb.toFixed(1).padStart(23),
    String(r.upstreams).padStart(18),
    String(r.ready).padStart(5),
  ]
  process.stdout.write(`${cells.join('  ')}\n`)
}
process.stdout.write(
  `lazy/eager: start ${(lazy.ms / eager.ms).toFixed(2)}x, ` +
    `total RSS ${(lazy.totalRssMb / eager.totalRssMb).toFixed(2)}x\n`,
)
fs.mkdirSync(path.join(repo, 'bench', 'results'), { recursive: true })
fs.writeFileSync(
  path.join(repo, 'bench', 'results', 'lazy-vs-eager.json'),
  JSON.stringify({ count, rounds, lazy, eager }, null, 2),
)
