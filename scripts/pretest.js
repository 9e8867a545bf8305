#!/usr/bin/env node
// What `npm test` runs before vitest, all at once: the build, lint and the conformance tools (their own npm
// ci, about 7 s on a fresh clone). Lint needs no build: the tests import the built modules as #dist/…
// (package.json "imports"), which tsconfig.check.json maps to src/ for the type-check, so it never reads a
// dist/ that the build is writing. One after the other the three took about 24 s of a fresh clone's
// .ci/run; the build and the type-check are one core each, the tools step waits on npm's network and disk.
// A step's failure fails the whole, with that step's exit code, once all three have finished.
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

process.exit(failed(await Promise.all([npmRun('build'), npmRun('lint'), npmRun('test:tools')])) ?? 0)
