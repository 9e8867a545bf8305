// The baseline build (BENCH_BASELINE): a second tutti checkout, built, whose
// daemon is measured beside this one's in the same run (target `tutti-base`
// of section call, the baseline rows of section list). A ratio between two
// builds taken minutes or hours apart on a shared 2-core machine measures the
// load more than the code; taken between rows of one round, it does not.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

/**
 * @typedef {object} Baseline
 * @property {string} dir      the checkout
 * @property {string} bin      its bin/run.cjs
 * @property {string} commit   `git rev-parse --short HEAD` there (`+dirty` when tracked files differ)
 */

/**
 * The short commit of a checkout, `+dirty` when a tracked file differs from it; 'unknown' outside git.
 * @param {string} dir
 */
export function gitHead(dir) {
  /** @param {string[]} args */
  const git = (args) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', timeout: 5000 }).trim()
  try {
    const head = git(['rev-parse', '--short', 'HEAD'])
    return git(['status', '--porcelain', '--untracked-files=no']) === '' ? head : `${head}+dirty`
  } catch {
    return 'unknown'
  }
}

/**
 * BENCH_BASELINE, checked: a directory holding a built tutti (bin/run.cjs and dist/). Undefined when unset.
 * @param {string | undefined} raw
 * @returns {Baseline | undefined}
 */
export function loadBaseline(raw) {
  if (!raw) return undefined
  const dir = path.resolve(raw)
  const bin = path.join(dir, 'bin/run.cjs')
  if (!fs.existsSync(bin))
    throw new Error(`BENCH_BASELINE: no ${bin} (give the root of a tutti checkout; README: "Against a baseline")`)
  if (!fs.existsSync(path.join(dir, 'dist')))
    throw new Error(`BENCH_BASELINE: ${dir} is not built (run \`npm run build\` there first)`)
  return { dir, bin, commit: gitHead(dir) }
}
