#!/usr/bin/env node
// What the stdio era probe (server/discover before initialize, src/runtime/upstream/upstream-connect.ts) costs a
// connect: connect + tools/list of real stdio servers, with the probe and with TUTTI_NO_ERA_PROBE=1, alternated,
// median of BENCH_PROBE_ROUNDS (15). No verdict store: every connect probes, as a first start does. Needs a build.
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const repo = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const rounds = Number(process.env.BENCH_PROBE_ROUNDS ?? 15)
const connection = pathToFileURL(path.join(repo, 'dist/runtime/upstream/upstream-connection.js')).href
const { UpstreamConnection } = await import(connection)

const SERVERS = {
  'server-everything (SDK v1)': {
    command: path.join(repo, 'node_modules/.bin/mcp-server-everything'),
    args: ['stdio'],
  },
  'many-tools fixture (SDK v2 serveStdio)': {
    command: process.execPath,
    args: [path.join(repo, 'bench/fixtures/many-tools-server.mjs')],
  },
}

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

for (const [name, server] of Object.entries(SERVERS)) {
  /** @type {Record<string, number[]>} */
  const times = { probe: [], plain: [] }
  /** @type {Record<string, string>} */
  const revisions = {}
  for (let i = 0; i < rounds; i++) {
    for (const mode of ['probe', 'plain']) {
      if (mode === 'plain') process.env.TUTTI_NO_ERA_PROBE = '1'
      else delete process.env.TUTTI_NO_ERA_PROBE
      const started = performance.now()
      const spec = { kind: 'stdio', key: 'probe', ...server, cwd: repo, env: { PATH: process.env.PATH ?? '' } }
      const conn = await UpstreamConnection.open(spec)
      await conn.listTools()
      times[mode].push(performance.now() - started)
      revisions[mode] = conn.protocolVersion
      await conn.close(0)
    }
  }
  const ms = (/** @type {string} */ mode) => `${median(times[mode]).toFixed(1)} ms (${revisions[mode]})`
  console.log(`${name}: with the probe ${ms('probe')}, without ${ms('plain')}; median of ${rounds}`)
}
