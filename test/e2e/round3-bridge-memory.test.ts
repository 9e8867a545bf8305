import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MODERN_ENVELOPE } from '../support/bridge-clients.js'
import { until } from '../support/eventually.js'
import { faultConnector } from '../support/fixture-connector.js'
import { installed, prepared } from '../support/in-process.js'
import { modernPost, type Binding } from '../support/mcp-clients.js'
import { BIN, cleanupState, isAlive, readDaemonJson, tempStateDir, tuttiEnv } from '../support/tutti.js'

const KiB = 1024
const MB = 1000 * 1000

/** Resident memory of a live process, as the kernel counts it (VmRSS). */
function rss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024
}

/** The largest RSS of each pid seen while it runs, sampled every few ms (and on demand). */
class RssSampler {
  readonly max = new Map<number, number>()
  private readonly timer: NodeJS.Timeout

  constructor(private readonly pids: number[]) {
    this.timer = setInterval(() => this.sample(), 20)
  }

  sample(): void {
    for (const pid of this.pids) if (isAlive(pid)) this.max.set(pid, Math.max(this.max.get(pid) ?? 0, rss(pid)))
  }

  stop(): void {
    clearInterval(this.timer)
    this.sample()
  }
}

describe('round 3: a client that never reads its answers bounds neither the bridge nor the daemon', () => {
  let dir: string
  let scratch: string
  let trace: string
  let gate: string
  let bystander: Binding
  let attacker: Binding

  beforeAll(async () => {
    dir = tempStateDir('round3-bridge')
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-round3-bridge-'))
    trace = path.join(scratch, 'calls')
    gate = path.join(scratch, 'gate')
    await installed(dir, faultConnector({ key: 'fx' }))
    await installed(dir, faultConnector({ key: 'gated', env: { FIXTURE_TRACE: trace, FIXTURE_GATE: gate } }))
    bystander = (await prepared(dir, { provider: 'codex', session: 'bystander' })).mcpServers[0]!
    attacker = (await prepared(dir, { provider: 'claude', session: 'attacker' })).mcpServers[0]!
  })
  afterAll(async () => {
    await cleanupState(dir)
    fs.rmSync(scratch, { recursive: true, force: true })
  })

  /** Another session's tools/list answers 200 with the tools, and its call of the attacked tool works. */
  async function bystanderServed(): Promise<void> {
    const list = await modernPost(bystander, 'tools/list')
    expect(list.status).toBe(200)
    const names = list.json.result.tools.map((t: { name: string }) => t.name)
    expect(names).toEqual(expect.arrayContaining(['fx_echo', 'gated_slow']))
    const call = await modernPost(bystander, 'tools/call', { name: 'fx_echo', arguments: { message: 'still here' } })
    expect(call.status).toBe(200)
    expect(call.json.result.content[0].text).toBe('still here')
  }

  it(
    'a stdio client writing 64 KiB tools/calls as fast as it can, reading nothing: the bridge stays under 100 MB, ' +
      'the daemon grows < 60 MB, and every request gets its answer once it reads',
    async () => {
      // the daemon and the upstream warmed up, so that the baseline is the daemon at work
      await bystanderServed()
      const daemonPid = readDaemonJson(dir)!.pid
      const daemonBefore = rss(daemonPid)
      // started as an MCP client starts it: vitest's NODE_ENV=test makes oclif look for TypeScript sources and load a
      // transpiler, 35 MB that no user's bridge has
      const env = tuttiEnv(dir, { NODE_ENV: undefined })
      const bridge = spawn(process.execPath, [BIN, 'session', 'bridge'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
      let stderr = ''
      bridge.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
      const exited = new Promise<number | null>((resolve) => bridge.once('exit', resolve))
      const sampler = new RssSampler([bridge.pid!, daemonPid])
      // stdout is a pipe nobody reads; stdin gets 64 KiB requests as fast as the pipe takes them (192 MB of answers)
      const TOTAL = 3000
      const payload = 'x'.repeat(64 * KiB)
      const request = (id: number): string => {
        const params = { name: 'fx_echo', arguments: { message: `${id}:${payload}` }, _meta: MODERN_ENVELOPE }
        return `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params })}\n`
      }
      let sent = 0
      let stopped = false
      const pump = (): void => {
        while (!stopped && sent < TOTAL) {
          if (!bridge.stdin!.write(request(sent++))) return void bridge.stdin!.once('drain', pump)
        }
      }
      try {
        pump()
        // the bridge says when the client has left its answers unread for a while: by then it reads no more of stdin
        const told = 'the client has not read its answers'
        expect(await until(() => stderr.includes(told) || sent === TOTAL, 60_000)).toBe(true)
        sampler.sample()
        // while it holds, another session is served as usual
        await bystanderServed()
        sampler.stop()
        const bridgeMax = sampler.max.get(bridge.pid!)!
        const daemonGrowth = sampler.max.get(daemonPid)! - daemonBefore
        const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`
        const report = `bridge max RSS ${mb(bridgeMax)}, daemon +${mb(daemonGrowth)}, ${sent} requests written`
        expect(bridgeMax, report).toBeLessThan(100 * MB)
        expect(daemonGrowth, report).toBeLessThan(60 * MB)
        // it stopped reading stdin: the client's writes wait in the pipe
        expect(sent, report).toBeLessThan(TOTAL)
        expect(stderr, report).toContain(told)

        // now the client reads: every request it wrote gets its answer, none lost, none twice
        stopped = true
        const answers = new Map<number, string>()
        let duplicates = 0
        readline.createInterface({ input: bridge.stdout! }).on('line', (line) => {
          const m = JSON.parse(line)
          if (answers.has(m.id)) duplicates++
          answers.set(m.id, m.result?.content?.[0]?.text ?? JSON.stringify(m.error))
        })
        expect(await until(() => answers.size >= sent, 60_000)).toBe(true)
        expect(answers.size).toBe(sent)
        expect(duplicates).toBe(0)
        const wrong = [...answers].filter(([id, text]) => text !== `${id}:${payload}`)
        expect(wrong.map(([id, text]) => `${id}: ${text.slice(0, 40)}`)).toEqual([])
        bridge.stdin!.end()
        expect(await exited).toBe(0)
      } finally {
        stopped = true
        sampler.stop()
        bridge.kill()
      }
    },
  )

  it(
    'one session with 64 requests in flight (calls held at the upstream): the next is answered 429 naming the cap; ' +
      'another session is served; the 64 complete and the session is served again',
    async () => {
      const CAP = 128
      const slow = () => modernPost(attacker, 'tools/call', { name: 'gated_slow', arguments: { ms: 1 } })
      const held = Array.from({ length: CAP }, slow)
      try {
        // every one of them reached the upstream, where it waits for the gate
        const calls = () => (fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8').split('\n') : [])
        expect(await until(() => calls().filter((name) => name === 'slow').length === CAP)).toBe(true)
        const expectRefused = (r: Awaited<ReturnType<typeof modernPost>>) => {
          expect(r.status).toBe(429)
          expect(r.json.error.message).toContain(`this session has ${CAP} MCP requests in flight`)
          expect(r.json.error.data).toEqual({ limit: 'mcpRequestsPerSession', max: CAP })
        }
        // on the hot path (a plain tools/list) and on the h3 path (a request with a repeated header goes there)
        expectRefused(await modernPost(attacker, 'tools/list'))
        const repeated = { accept: ['application/json', 'text/event-stream'] as unknown as string }
        expectRefused(await modernPost(attacker, 'tools/list', {}, repeated))
        await bystanderServed()
      } finally {
        fs.writeFileSync(gate, '')
      }
      for (const answer of await Promise.all(held)) {
        expect(answer.status).toBe(200)
        expect(answer.json.result.content[0].text).toBe('slept 1 ms in v1')
      }
      // the count went with the answers
      expect(await until(async () => (await modernPost(attacker, 'tools/list')).status === 200)).toBe(true)
    },
  )
})
