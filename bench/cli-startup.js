#!/usr/bin/env node
// CLI-side figures, each against a baseline measured in the same run:
//  - `tutti connector available --json` with the daemon already running, vs `node -e 0`
//  - `tutti-connector-<key> --version` (the shim) vs `node <entrypoint> --version` run directly
//  - recovery after kill -9 of the daemon: how long the next `connector available` takes
// Medians of N runs (BENCH_CLI_RUNS, default 20; the shim comparison uses 50).
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const runs = Number(process.env.BENCH_CLI_RUNS ?? 20)
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-bench-cli-'))
const env = { ...process.env, TUTTI_STATE_DIR: stateDir, PATH: `${path.join(repo, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`, EVERYTHING_API_KEY: 'bench' }
const tutti = (...args) => execFileSync(process.execPath, [path.join(repo, 'bin', 'run.js'), ...args], { env, encoding: 'utf8' })

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
function time(file, args, n) {
  const ms = []
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint()
    const r = spawnSync(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    ms.push(Number(process.hrtime.bigint() - t) / 1e6)
    if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  }
  return median(ms)
}

try {
  tutti('connector', 'install', path.join(repo, 'examples', 'connectors', 'notes'))
  tutti('connector', 'install', path.join(repo, 'examples', 'connectors', 'everything'))
  tutti('connector', 'connect', 'everything', '--from-env', 'EVERYTHING_API_KEY')
  const rows = []
  const nodeBaseline = time(process.execPath, ['-e', '0'], runs)
  const available = time(process.execPath, [path.join(repo, 'bin', 'run.js'), 'connector', 'available', '--json'], runs)
  rows.push(['node -e 0 (baseline)', nodeBaseline, '1.00x'], ['tutti connector available --json (daemon running)', available, `${(available / nodeBaseline).toFixed(2)}x`])

  const installed = JSON.parse(fs.readFileSync(path.join(stateDir, 'installed.json'), 'utf8'))
  const entry = path.join(stateDir, 'connectors', 'everything', 'releases', installed.connectors.everything.digest, 'bin', 'everything.js')
  const direct = time(process.execPath, [entry, '--version'], 50)
  const shim = time(path.join(stateDir, 'bin', 'tutti-connector-everything'), ['--version'], 50)
  rows.push(['node <entrypoint> --version (direct)', direct, '1.00x'], ['tutti-connector-everything --version (shim)', shim, `+${(shim - direct).toFixed(1)} ms`])

  const recoveries = []
  for (let i = 0; i < 5; i++) {
    const { pid } = JSON.parse(fs.readFileSync(path.join(stateDir, 'daemon.json'), 'utf8'))
    process.kill(pid, 'SIGKILL')
    while (fs.existsSync(`/proc/${pid}`) && !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z')) await new Promise((r) => setTimeout(r, 5))
    const t = process.hrtime.bigint()
    tutti('connector', 'available', '--json')
    recoveries.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  const warm = time(process.execPath, [path.join(repo, 'bin', 'run.js'), 'connector', 'available', '--json'], 5)
  rows.push(['next `connector available` after kill -9 of the daemon', median(recoveries), `+${(median(recoveries) - warm).toFixed(0)} ms over a warm call`])

  const width = Math.max(...rows.map((r) => r[0].length))
  process.stdout.write(`\nCLI figures (medians; ${runs} runs, shim 50, recovery 5)\n`)
  for (const [label, ms, note] of rows) process.stdout.write(`${label.padEnd(width)}  ${ms.toFixed(1).padStart(7)} ms  ${note}\n`)
  fs.mkdirSync(path.join(repo, 'bench', 'results'), { recursive: true })
  fs.writeFileSync(path.join(repo, 'bench', 'results', 'cli-startup.json'), JSON.stringify({ runs, rows: rows.map(([label, ms, note]) => ({ label, ms, note })) }, null, 2))
} finally {
  spawnSync(process.execPath, [path.join(repo, 'bin', 'run.js'), 'daemon', 'stop'], { env })
  fs.rmSync(stateDir, { recursive: true, force: true })
}
