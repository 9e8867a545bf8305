// The run context shared by every target: paths, the run's temp dir and the
// environment given to spawned processes.
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { RUN_MARKER } from './procs.js'

export const REPO = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '')
export const NODE_MODULES = path.join(REPO, 'node_modules')
export const BIN_DIR = path.join(NODE_MODULES, '.bin')
export const EVERYTHING_ENTRY = path.join(NODE_MODULES, '@modelcontextprotocol/server-everything/dist/index.js')
export const NET_GUARD = fileURLToPath(new URL('./net-guard.mjs', import.meta.url))
export const TUTTI_BIN = path.join(REPO, 'bin/run.cjs')

/**
 * @typedef {object} RunContext
 * @property {import('./config.js').BenchConfig} cfg
 * @property {string} runId
 * @property {string} runRoot     temp dir holding every log and state dir of this run
 * @property {(sub: string) => string} dir   mkdir -p runRoot/sub
 * @property {(extra?: Record<string, string>) => NodeJS.ProcessEnv} env   env for a spawned process
 */

/** @param {import('./config.js').BenchConfig} cfg @returns {RunContext} */
export function createContext(cfg) {
  const runId = crypto.randomBytes(6).toString('hex')
  const runRoot = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-bench-')))
  return {
    cfg,
    runId,
    runRoot,
    dir(sub) {
      const d = path.join(runRoot, sub)
      fs.mkdirSync(d, { recursive: true })
      return d
    },
    env(extra = {}) {
      return {
        ...process.env,
        PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
        [RUN_MARKER]: runId,
        ...extra,
      }
    },
  }
}
