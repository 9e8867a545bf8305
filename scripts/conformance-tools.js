#!/usr/bin/env node
// `npm run test:tools`: install tools/conformance (the MCP conformance suite and the Node 22 it
// needs) only when its lockfile changed since the last install. npm ci deletes and rewrites
// node_modules every time (about 20 s here); the stamp records the lockfile hash it installed.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'tools', 'conformance')
const STAMP = path.join(DIR, 'node_modules', '.tutti-lockfile-sha256')

const lockHash = createHash('sha256')
  .update(fs.readFileSync(path.join(DIR, 'package-lock.json')))
  .digest('hex')
const installed = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8').trim() : undefined
if (installed === lockHash && !process.argv.includes('--force')) {
  process.stdout.write(`tools/conformance: installed for this lockfile (${lockHash.slice(0, 12)}), not reinstalled\n`)
} else {
  const args = ['ci', '--prefix', DIR, '--no-audit', '--no-fund', '--loglevel=error']
  const npm = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { stdio: 'inherit' })
  if (npm.status !== 0) {
    process.stderr.write(`tools/conformance: npm ci failed (${npm.status ?? npm.signal})\n`)
    process.exit(npm.status ?? 1)
  }
  fs.writeFileSync(STAMP, `${lockHash}\n`)
}
