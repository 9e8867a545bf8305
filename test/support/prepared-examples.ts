import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { tmpRoot } from './test-run.js'

/**
 * The bundled examples are self-contained: `connector install` runs npm for
 * their dependencies. Dozens of tests install them, so the suite installs
 * those dependencies once, into a copy whose name is a hash of the examples'
 * sources (so an edit gives a new copy), and the tests install from it. One
 * test installs straight from examples/connectors to cover the npm step.
 */
const REPO = path.resolve(fileURLToPath(new URL('../..', import.meta.url)))
export const EXAMPLES_SOURCE = path.join(REPO, 'examples', 'connectors')

function hashTree(dir: string, hash = createHash('sha256'), rel = ''): ReturnType<typeof createHash> {
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    if (name === 'node_modules') continue
    const p = path.join(dir, rel, name)
    hash.update(`${rel}/${name}\0`)
    if (fs.statSync(p).isDirectory()) hashTree(dir, hash, path.join(rel, name))
    else hash.update(fs.readFileSync(p))
  }
  return hash
}

export const PREPARED_EXAMPLES = path.join(
  tmpRoot(),
  `tutti-examples-${hashTree(EXAMPLES_SOURCE).digest('hex').slice(0, 16)}`,
)

/** vitest globalSetup: prepare the copy once per change of the examples. */
export default function setup(): void {
  const ready = path.join(PREPARED_EXAMPLES, '.ready')
  if (fs.existsSync(ready)) return
  const staging = `${PREPARED_EXAMPLES}.${process.pid}.tmp`
  fs.rmSync(staging, { recursive: true, force: true })
  fs.cpSync(EXAMPLES_SOURCE, staging, { recursive: true })
  for (const name of fs.readdirSync(staging)) {
    // what tutti itself runs for a release with a lockfile (src/runtime/install/npm-dependencies.ts)
    execFileSync(
      'npm',
      ['ci', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts', '--prefer-offline'],
      { cwd: path.join(staging, name), stdio: ['ignore', 'ignore', 'inherit'] },
    )
  }
  fs.writeFileSync(path.join(staging, '.ready'), '')
  fs.rmSync(PREPARED_EXAMPLES, { recursive: true, force: true })
  fs.renameSync(staging, PREPARED_EXAMPLES)
}
