#!/usr/bin/env node
// What `npm test` runs before vitest: the conformance tools (their own npm ci, about 7 s on a fresh
// clone) beside the build, then lint, which type-checks the tests against the build's declarations.
// One after the other they took about 24 s of a fresh clone's .ci/run; the tools step waits on npm's
// network and disk, the build on one core, so the two overlap. Any step's failure fails the whole
// with that step's exit code, after both have finished (a half-installed tool dir is not left racing).
import { spawn } from 'node:child_process'

/** @param {string} script @returns {Promise<number>} */
function npmRun(script) {
  return new Promise((resolve) => {
    const child = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', script], {
      stdio: 'inherit',
    })
    child.on('error', () => resolve(1))
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

/** @param {number[]} codes */
const failed = (codes) => codes.find((c) => c !== 0)

const first = failed(await Promise.all([npmRun('build'), npmRun('test:tools')]))
if (first !== undefined) process.exit(first)
process.exit((await npmRun('lint')) || 0)
