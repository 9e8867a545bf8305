#!/usr/bin/env node
// Standalone, not part of npm run bench: the time of an unchanged reinstall of an npm: connector
// (issue 21, goal ≤ 3 s; it was 31–33 s). One install of @modelcontextprotocol/server-memory from the
// registry through the user's npm, then BENCH_REINSTALL_ROUNDS reinstalls each of
//   npm:<name>@<installed version>   no fetch, no query
//   npm:<name>                       one `npm view` (metadata), no tarball
// (each spec installed once untimed first: another spec is another way of installing it).
// Prints the medians; every run must say "already installed".
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const rounds = Number(process.env.BENCH_REINSTALL_ROUNDS ?? 5)
const name = process.env.BENCH_REINSTALL_PACKAGE ?? '@modelcontextprotocol/server-memory'
const state = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-bench-reinstall-'))
const env = { ...process.env, TUTTI_STATE_DIR: state, NODE_OPTIONS: '' }
/** @param {string[]} args */
const tutti = (...args) =>
  execFileSync(process.execPath, [path.join(repo, 'bin/run.cjs'), ...args], { env, encoding: 'utf8' })
/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

try {
  let started = Date.now()
  const first = JSON.parse(tutti('connector', 'install', `npm:${name}`, '--json'))
  const firstMs = Date.now() - started
  /** @type {Record<string, { medianMs: number, runs: number[] }>} */
  const figures = {}
  for (const spec of [`npm:${name}@${first.version}`, `npm:${name}`]) {
    // untimed: another spec is another way of installing it, recorded by one full install
    tutti('connector', 'install', spec)
    const times = []
    for (let i = 0; i < rounds; i++) {
      started = Date.now()
      const out = tutti('connector', 'install', spec)
      times.push(Date.now() - started)
      if (!out.startsWith('already installed')) throw new Error(`${spec}: expected "already installed", got: ${out}`)
    }
    figures[spec] = { medianMs: median(times), runs: times }
  }
  console.log(`first install of npm:${name} (${first.version}): ${firstMs} ms`)
  for (const [spec, f] of Object.entries(figures)) {
    const met = f.medianMs <= 3000 ? 'yes' : 'no'
    console.log(
      `unchanged reinstall ${spec}: median ${f.medianMs} ms of ${rounds} ` +
        `(goal ≤ 3000 ms: ${met}) [${f.runs.join(', ')}]`,
    )
  }
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
} finally {
  try {
    tutti('daemon', 'stop')
  } catch {}
  fs.rmSync(state, { recursive: true, force: true })
}
