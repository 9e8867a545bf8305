#!/usr/bin/env node
// `npm run demo`: install the bundled example connectors into a state
// directory, connect the one that needs a credential, and show what an
// agent would see with `tutti connector available`.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const stateDir = process.env.TUTTI_STATE_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-demo-'))
const env = {
  ...process.env,
  TUTTI_STATE_DIR: stateDir,
  // the example connectors run MCP servers installed from npm (mcp-server-memory, mcp-server-everything)
  PATH: `${path.join(repo, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`,
  EVERYTHING_API_KEY: process.env.EVERYTHING_API_KEY ?? 'demo-key-not-a-real-secret',
}
const tutti = (...args) => execFileSync(process.execPath, [path.join(repo, 'bin', 'run.js'), ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
const step = (title) => process.stdout.write(`\n== ${title}\n`)

step(`state directory: ${stateDir}`)
for (const name of ['notes', 'everything']) {
  step(`tutti connector install examples/connectors/${name}`)
  process.stdout.write(tutti('connector', 'install', path.join(repo, 'examples', 'connectors', name)))
}
step('tutti connector connect everything --from-env EVERYTHING_API_KEY')
process.stdout.write(tutti('connector', 'connect', 'everything', '--from-env', 'EVERYTHING_API_KEY'))

step('tutti connector available')
process.stdout.write(tutti('connector', 'available'))
step('tutti connector available --json')
process.stdout.write(tutti('connector', 'available', '--json'))
step('tutti daemon status')
process.stdout.write(tutti('daemon', 'status'))

if (process.argv.includes('--keep')) {
  step(`daemon left running; stop it with: TUTTI_STATE_DIR=${stateDir} ./bin/run.js daemon stop`)
} else {
  step('tutti daemon stop')
  process.stdout.write(tutti('daemon', 'stop'))
}
