import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MODERN_REVISION } from '../../src/runtime/mcp-wire.js'
import { LEGACY_VERDICT_MS, UpstreamEras } from '../../src/runtime/upstream/upstream-eras.js'
import { UpstreamConnection } from '../../src/runtime/upstream/upstream-connection.js'
import { REPO } from '../support/tutti.js'

// tutti probes a stdio server with server/discover before it initializes it (upstream-connect.ts), as the
// 2026-07-28 spec asks of a client that speaks both eras, and remembers a 2025 verdict (upstream-eras.ts).
// Real processes: a 2026-07-28 server on the SDK's serveStdio, and test/fixtures/era-probe-server.mjs for the
// ways a 2025 server meets a request before initialize.
const MODERN_SERVER = path.join(REPO, 'bench/fixtures/many-tools-server.mjs')
const LEGACY_SERVER = path.join(REPO, 'test/fixtures/era-probe-server.mjs')

let dir: string
let eras: UpstreamEras
const open: UpstreamConnection[] = []

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-eras-'))
  eras = new UpstreamEras((key) => path.join(dir, key, 'upstream-era.json'))
})
afterAll(async () => {
  await Promise.all(open.map((c) => c.close(0)))
  fs.rmSync(dir, { recursive: true, force: true })
})

function legacySpec(key: string, mode: string, startupMs?: number) {
  const trace = path.join(dir, `${key}.trace`)
  const env = { ERA_MODE: mode, ERA_TRACE: trace }
  const spec = { kind: 'stdio' as const, key, command: process.execPath, args: [LEGACY_SERVER], cwd: dir, env }
  return { spec: startupMs ? { ...spec, timeouts: { startupMs } } : spec, trace }
}
const traced = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n')
const methods = (file: string) => traced(file).map((line) => line.split(' ')[1])
/** A call answered: the server has read (and traced) everything sent before it, in order. */
const served = async (conn: UpstreamConnection) =>
  expect((await conn.callTool('hi', {}, {})).content).toEqual([{ type: 'text', text: 'hi' }])
const HANDSHAKE = ['initialize', 'notifications/initialized', 'tools/call']

async function connect(...args: Parameters<typeof UpstreamConnection.open>) {
  const conn = await UpstreamConnection.open(...args)
  open.push(conn)
  return conn
}

describe('the stdio era probe', () => {
  it('a server that answers server/discover gets a 2026-07-28 link, and no verdict is kept', async () => {
    const spec = { kind: 'stdio' as const, key: 'modern', command: process.execPath, args: [MODERN_SERVER], cwd: REPO }
    const conn = await connect({ ...spec, env: {} }, undefined, undefined, eras)
    expect(conn.protocolVersion).toBe(MODERN_REVISION)
    expect((await conn.callTool('tool-00', { message: 'x' }, {})).content).toEqual([{ type: 'text', text: 'x' }])
    expect(fs.existsSync(path.join(dir, 'modern', 'upstream-era.json'))).toBe(false)
  })

  it('a 2025 server that refuses it is initialized on the same process; the next start skips the probe', async () => {
    const { spec, trace } = legacySpec('refuse', 'refuse')
    const first = await connect(spec, undefined, undefined, eras)
    expect(first.protocolVersion).toBe('2025-11-25')
    await served(first)
    expect(traced(trace).map((line) => line.split(' ')[0])).toEqual(Array(4).fill(String(first.pid)))
    expect(methods(trace)).toEqual(['server/discover', ...HANDSHAKE])
    await first.close(0)
    fs.rmSync(trace)
    const second = await connect(spec, undefined, undefined, eras)
    expect(second.protocolVersion).toBe('2025-11-25')
    await served(second)
    expect(methods(trace)).toEqual(HANDSHAKE)
  })

  it('a 2025 server that exits on it is started again and initialized, and remembered', async () => {
    const { spec, trace } = legacySpec('exit', 'exit')
    const conn = await connect(spec, undefined, undefined, eras)
    expect(conn.protocolVersion).toBe('2025-11-25')
    await served(conn)
    const lines = traced(trace)
    expect(methods(trace)).toEqual(['server/discover', ...HANDSHAKE])
    // the probe's process is not the one serving
    expect(lines[0]!.split(' ')[0]).not.toBe(String(conn.pid))
    expect(lines[1]!.split(' ')[0]).toBe(String(conn.pid))
    expect(await eras.isLegacy({ key: 'exit', command: spec.command, args: spec.args, cwd: spec.cwd })).toBe(true)
  })

  it('a 2025 server that never answers it is initialized after a third of the start bound', async () => {
    const { spec, trace } = legacySpec('silent', 'silent', 6_000)
    const conn = await connect(spec, undefined, undefined, eras)
    expect(conn.protocolVersion).toBe('2025-11-25')
    await served(conn)
    expect(methods(trace)).toEqual(['server/discover', ...HANDSHAKE])
    expect(await eras.isLegacy({ key: 'silent', command: spec.command, args: spec.args, cwd: spec.cwd })).toBe(true)
  })
})

describe('TUTTI_NO_ERA_PROBE=1', () => {
  it('gives every stdio server the plain 2025 initialize: no probe, even for a 2026-07-28 server', async () => {
    process.env.TUTTI_NO_ERA_PROBE = '1'
    try {
      const spec = { kind: 'stdio' as const, key: 'unprobed', command: process.execPath, args: [MODERN_SERVER] }
      const conn = await connect({ ...spec, cwd: REPO, env: {} }, undefined, undefined, eras)
      expect(conn.protocolVersion).toBe('2025-11-25')
      const { spec: legacy, trace } = legacySpec('unprobed-legacy', 'refuse')
      await served(await connect(legacy, undefined, undefined, eras))
      expect(methods(trace)).toEqual(HANDSHAKE)
    } finally {
      delete process.env.TUTTI_NO_ERA_PROBE
    }
  })
})

describe('UpstreamEras', () => {
  const probed = { key: 'k', command: 'node', args: ['server.js'], cwd: '/releases/abc' }

  it('keeps a 2025 verdict for its command line only, and for LEGACY_VERDICT_MS', async () => {
    expect(await eras.isLegacy(probed)).toBe(false)
    await eras.rememberLegacy(probed)
    const now = Date.now()
    expect(await eras.isLegacy(probed, now)).toBe(true)
    expect(await eras.isLegacy(probed, now + LEGACY_VERDICT_MS + 1_000)).toBe(false)
    // an upgrade is another release directory: probed again
    expect(await eras.isLegacy({ ...probed, cwd: '/releases/def' }, now)).toBe(false)
    expect(await eras.isLegacy({ ...probed, args: ['server.js', '--stdio'] }, now)).toBe(false)
  })

  it('a damaged verdict file is no verdict', async () => {
    fs.mkdirSync(path.join(dir, 'damaged'), { recursive: true })
    fs.writeFileSync(path.join(dir, 'damaged', 'upstream-era.json'), '{not json')
    expect(await eras.isLegacy({ ...probed, key: 'damaged' })).toBe(false)
  })
})
