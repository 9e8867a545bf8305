// Section "cli": what a user waits for around the daemon, each against a
// baseline of the same run where there is one. Pairs are interleaved (A, B,
// A, B …) so a slow spell hits both; figures are medians.
//  - `tutti connector available --json` with a warm daemon vs `node -e 0`
//  - `tutti-connector-everything --version` (the shim) vs `node <entrypoint> --version`
//  - daemon fork-to-healthy: from spawning the daemon (as the CLI does) to its first health answer
//  - kill -9 recovery: the next `connector available` after the daemon was killed
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { REPO, TUTTI_BIN } from './context.js'
import { medianOf } from './ratios.js'
import { pidAlive } from './procs.js'
import { daemonPid, stopDaemon, tutti } from './tutti-cli.js'
import { pollUntil, sleep } from './wait.js'

const EXAMPLES = path.join(REPO, 'examples/connectors')
/** @param {unknown} err */
const message = (err) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim()

/**
 * Wall ms of one run of `file args`; throws on a non-zero exit.
 * @param {string} file @param {string[]} args @param {NodeJS.ProcessEnv} env @param {string} cwd
 */
function timeOnce(file, args, env, cwd) {
  const t0 = performance.now()
  const r = spawnSync(file, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 })
  const ms = performance.now() - t0
  if (r.status !== 0) {
    const stderr = String(r.stderr).trim().slice(0, 200)
    throw new Error(`${path.basename(file)} ${args.join(' ')} exited ${r.status ?? r.signal}: ${stderr}`)
  }
  return ms
}

/**
 * `runs` interleaved runs of two commands → both sample lists.
 * @param {string[]} a @param {string[]} b @param {number} runs @param {NodeJS.ProcessEnv} env @param {string} cwd
 */
function pair(a, b, runs, env, cwd) {
  /** @type {number[]} */
  const as = []
  /** @type {number[]} */
  const bs = []
  for (let i = 0; i < runs; i++) {
    as.push(timeOnce(a[0], a.slice(1), env, cwd))
    bs.push(timeOnce(b[0], b.slice(1), env, cwd))
  }
  // each run of a beside the run of b that followed it: a slow spell of the machine hits both of a pair
  const diffs = as.map((x, i) => x - bs[i])
  return { a: medianOf(as), b: medianOf(bs), diff: medianOf(diffs), aSamples: as, bSamples: bs }
}

/**
 * The function the CLI uses to spawn the daemon, from the build; or a plain spawn of the entry it names.
 * @returns {Promise<(stateDir: string) => Promise<{ pid?: number }>>}
 */
async function daemonSpawner() {
  const mod = await import(pathToFileURL(path.join(REPO, 'dist/runtime/client/daemon-process.js')).href)
  const paths = await import(pathToFileURL(path.join(REPO, 'dist/runtime/paths.js')).href)
  if (typeof mod.spawnDaemon !== 'function' || typeof paths.statePaths !== 'function')
    throw new Error('dist/runtime/client/daemon-process.js exports no spawnDaemon')
  return (stateDir) => mod.spawnDaemon(paths.statePaths(stateDir))
}

/**
 * POST /control/health with daemon.json's token: true on a 200.
 * @param {{ port: number, controlToken: string }} info @returns {Promise<boolean>}
 */
function healthOk(info) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: info.port,
        method: 'POST',
        path: '/control/health',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${info.controlToken}` },
        timeout: 2000,
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode === 200))
      },
    )
    req.on('error', () => resolve(false))
    req.on('timeout', () => req.destroy())
    req.end('{}')
  })
}

/**
 * From spawn to the first health answer of that daemon, polled every 2 ms.
 * @param {(stateDir: string) => Promise<{ pid?: number }>} spawnDaemon @param {string} stateDir
 */
async function forkToHealthy(spawnDaemon, stateDir) {
  const file = path.join(stateDir, 'daemon.json')
  const t0 = performance.now()
  const child = await spawnDaemon(stateDir)
  const deadline = t0 + 20_000
  while (performance.now() < deadline) {
    let info
    try {
      info = JSON.parse(fs.readFileSync(file, 'utf8'))
    } catch {
      info = undefined
    }
    if (info?.pid === child.pid && (await healthOk(info))) return performance.now() - t0
    await sleep(2)
  }
  throw new Error('the daemon did not answer health within 20 s')
}

/**
 * @param {import('./context.js').RunContext} ctx
 * @param {(line: string) => void} progress
 */
export async function runCliSection(ctx, progress) {
  const { cfg } = ctx
  const t = { ctx, stateDir: ctx.dir('tutti-cli-state') }
  const env = t.ctx.env({ TUTTI_STATE_DIR: t.stateDir, EVERYTHING_API_KEY: 'bench' })
  const cwd = ctx.runRoot
  const available = [process.execPath, TUTTI_BIN, 'connector', 'available', '--json']
  /** @type {Record<string, any>} */
  const out = { errors: {} }
  /** @param {string} name @param {() => unknown} fn */
  const step = async (name, fn) => {
    try {
      out[name] = await fn()
    } catch (err) {
      out.errors[name] = message(err)
      progress(`cli ${name}: FAILED ${out.errors[name]}`)
    }
  }
  try {
    await tutti(t, ['connector', 'install', path.join(EXAMPLES, 'notes')])
    await tutti(t, ['connector', 'install', path.join(EXAMPLES, 'everything')])
    await tutti(t, ['connector', 'connect', 'everything', '--from-env', 'EVERYTHING_API_KEY'], {
      EVERYTHING_API_KEY: 'bench',
    })
    timeOnce(available[0], available.slice(1), env, cwd) // the daemon is up and this call path warm
    await step('available', () => {
      progress(`cli: connector available vs node -e 0, ${cfg.cliRuns} runs each`)
      const p = pair(available, [process.execPath, '-e', '0'], cfg.cliRuns, env, cwd)
      return { ms: p.a, nodeMs: p.b, ratio: p.a / p.b, samples: p.aSamples, nodeSamples: p.bSamples }
    })
    await step('shim', () => {
      const installed = JSON.parse(fs.readFileSync(path.join(t.stateDir, 'installed.json'), 'utf8'))
      const digest = installed.connectors?.everything?.digest
      const entry = path.join(
        t.stateDir,
        'connectors',
        'everything',
        'releases',
        String(digest),
        'bin',
        'everything.js',
      )
      if (!fs.existsSync(entry)) throw new Error(`no entrypoint at ${entry}`)
      const shim = path.join(t.stateDir, 'bin', 'tutti-connector-everything')
      progress(`cli: shim vs direct entrypoint, ${cfg.shimRuns} runs each`)
      const p = pair([shim, '--version'], [process.execPath, entry, '--version'], cfg.shimRuns, env, cwd)
      return { shimMs: p.a, directMs: p.b, overheadMs: p.diff, shim, entry }
    })
    await step('recovery', async () => {
      const runs = []
      for (let i = 0; i < cfg.recoveryRuns; i++) {
        const pid = daemonPid(t.stateDir)
        if (pid === undefined) throw new Error('no daemon pid to kill')
        process.kill(pid, 'SIGKILL')
        await pollUntil('killed daemon gone', 10_000, () => !pidAlive(pid), { intervalMs: 2 })
        runs.push(timeOnce(available[0], available.slice(1), env, cwd))
        progress(`cli: kill -9 recovery ${i + 1}/${cfg.recoveryRuns}: ${runs[i].toFixed(0)} ms`)
      }
      return { ms: medianOf(runs), samples: runs }
    })
    await step('fork', async () => {
      const spawnDaemon = await daemonSpawner()
      const runs = []
      for (let i = 0; i < cfg.forkRuns; i++) {
        await stopDaemon(t)
        runs.push(await forkToHealthy(spawnDaemon, t.stateDir))
        progress(`cli: fork-to-healthy ${i + 1}/${cfg.forkRuns}: ${runs[i].toFixed(0)} ms`)
      }
      return { ms: medianOf(runs), samples: runs }
    })
  } catch (err) {
    out.error = message(err)
    progress(`cli: FAILED ${out.error}`)
  } finally {
    progress(`cli: ${await stopDaemon(t)}`)
  }
  return out
}
