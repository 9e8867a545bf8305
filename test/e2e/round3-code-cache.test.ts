import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CRASH_SIGNALS } from '#dist/runtime/client/daemon-process.js'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { modernPost, type Binding } from '../support/mcp-clients.js'
import {
  cleanupState,
  daemonPids,
  isAlive,
  readDaemonJson,
  spawnTutti,
  tempStateDir,
  tuttiJson,
} from '../support/tutti.js'

/**
 * A damaged code cache (round 3, item 9). The cache's SHA-256 header is
 * recomputed over damaged V8 data, so it passes the digest check and V8
 * aborts the daemon in its deserializer (SIGTRAP, "Fatal error ...
 * unreachable code") at every start: on main every command then failed
 * DAEMON_START_FAILED until someone deleted code-cache/. Now a start that
 * uses the cache leaves a marker until it has finished; the CLI starts a
 * daemon that crashed once more, and that start, finding the crashed one's
 * marker, runs without the cache and removes it.
 */

interface LogLine {
  msg: string
  use?: string
  pids?: number[]
}

/** Flip 64 bytes in the middle of V8's data and recompute the digest over them. */
function damage(file: string): Buffer {
  const bytes = Buffer.from(fs.readFileSync(file))
  const data = bytes.subarray(32)
  // deep in the payload: V8 aborts there (a flip near the start of its data is merely rejected). One region
  // in the middle sometimes fell on bytes no start reads, and that daemon started (seen in a full run): seven
  // regions, from an eighth of the way in to seven eighths, leave the deserializer nothing it can read through
  for (let part = 1; part < 8; part++) {
    const at = Math.floor((data.length * part) / 8)
    for (let i = at; i < at + 64 && i < data.length; i++) data[i]! ^= 0xff
  }
  createHash('sha256').update(data).digest().copy(bytes, 0)
  fs.writeFileSync(file, bytes, { mode: 0o600 })
  return bytes
}

/** One tools/list of a session prepared before: its status and tool names. */
async function listTools(binding: Binding): Promise<{ status: number; tools: string[] }> {
  const res = await modernPost(binding, 'tools/list')
  return { status: res.status, tools: (res.json?.result?.tools ?? []).map((t: { name: string }) => t.name) }
}

describe('round 3: a damaged code cache never wedges the state dir', () => {
  let dir: string
  const log = (): LogLine[] =>
    fs
      .readFileSync(path.join(dir, 'daemon.log'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine)
  const cacheFile = (): string | undefined => {
    const cacheDir = path.join(dir, 'code-cache')
    const name = fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).find((n) => n.endsWith('.cache')) : undefined
    return name && path.join(cacheDir, name)
  }
  /** A running daemon whose cache is on disk: it took the one there, or has written its own. */
  const cacheSettled = (): boolean => {
    const all = log()
    const lines = all.slice(all.map((l) => l.msg).lastIndexOf('daemon listening'))
    const use = lines.map((l) => l.msg).lastIndexOf('code cache')
    return use >= 0 && (lines[use]!.use === 'accepted' || lines.slice(use).some((l) => l.msg === 'code cache written'))
  }
  /** The daemon's code cache file, saved by a daemon that then stops and keeps its sessions (SIGTERM). */
  async function goodCache(): Promise<{ file: string; binding: Binding }> {
    await tuttiJson(dir, ['daemon', 'start'])
    expect(await until(cacheSettled)).toBe(true)
    const binding = (await prepared(dir, { workspace: 'w', session: 'bystander' })).mcpServers[0] as Binding
    const pid = readDaemonJson(dir)!.pid
    process.kill(pid, 'SIGTERM')
    expect(await until(() => !isAlive(pid))).toBe(true)
    return { file: cacheFile()!, binding }
  }

  beforeAll(async () => {
    dir = tempStateDir('r3-code-cache')
    await installed(dir, faultConnector({ key: 'bystander' }))
  })
  afterAll(async () => {
    await cleanupState(dir)
  })

  it('the next command gets a healthy daemon; the cache goes, daemon.log says why, a good one follows', async () => {
    const { file, binding } = await goodCache()
    const damaged = damage(file)

    const available = await tuttiJson(dir, ['connector', 'available'])
    expect(available.connectors.map((c: { key: string }) => c.key)).toEqual(['bystander'])
    const pid = readDaemonJson(dir)!.pid
    expect(daemonPids(dir)).toEqual([pid])
    const dropped = log().filter((l) => l.msg.startsWith('code cache removed unused'))
    expect(dropped).toHaveLength(1)
    expect(dropped[0]!.msg).toMatch(/a start that used it never finished/)
    expect(dropped[0]!.pids).toHaveLength(1)
    expect(dropped[0]!.pids![0]).not.toBe(pid)
    expect(
      log()
        .filter((l) => l.msg === 'code cache')
        .at(-1)?.use,
    ).toBe('dropped')
    // the session prepared before the damage is served by the daemon that started without it
    expect(await listTools(binding)).toEqual({ status: 200, tools: expect.arrayContaining(['bystander_echo']) })

    // written anew by that daemon, and taken by the next one
    expect(await until(cacheSettled)).toBe(true)
    expect(fs.readFileSync(file).equals(damaged)).toBe(false)
    expect(fs.readdirSync(path.dirname(file))).toEqual([path.basename(file)])
    await tuttiJson(dir, ['daemon', 'stop'])
    await tuttiJson(dir, ['daemon', 'start'])
    expect(
      log()
        .filter((l) => l.msg === 'code cache')
        .at(-1)?.use,
    ).toBe('accepted')
    await tuttiJson(dir, ['daemon', 'stop'])
  })

  it('`daemon run` (foreground) on a damaged cache aborts once; the next run starts without the cache', async () => {
    const { file } = await goodCache()
    damage(file)
    const run = () => {
      const child = spawnTutti(dir, ['daemon', 'run'])
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, signal) => resolve(signal)))
      // the line it prints once it listens, or its exit if it never does
      const listening = new Promise<boolean>((resolve) => {
        let out = ''
        child.stdout.on('data', (d) => /listening on 127\.0\.0\.1:\d+/.test((out += d)) && resolve(true))
        void exited.then(() => resolve(false))
      })
      return { child, exited, listening }
    }
    const aborted = run()
    expect(await aborted.listening).toBe(false)
    // V8 meets the damage where it happens to lie: mostly a trap, sometimes a segfault (seen in a full run)
    expect([...CRASH_SIGNALS]).toContain(await aborted.exited)

    const next = run()
    expect(await next.listening).toBe(true)
    expect(
      log()
        .filter((l) => l.msg === 'code cache')
        .at(-1)?.use,
    ).toBe('dropped')
    const dropped = log().filter((l) => l.msg.startsWith('code cache removed unused'))
    expect(dropped.at(-1)?.pids).toEqual([aborted.child.pid])
    const binding = (await prepared(dir, { workspace: 'w', session: 'foreground' })).mcpServers[0] as Binding
    expect(await listTools(binding)).toEqual({ status: 200, tools: expect.arrayContaining(['bystander_echo']) })
    next.child.kill('SIGINT')
    expect(await next.exited).toBeNull()
  })
})
