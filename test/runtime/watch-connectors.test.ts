import net from 'node:net'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { watchConnectors, type ConnectorWatch } from '../../src/runtime/client/watch-connectors.js'
import { TuttiError } from '../../src/runtime/errors.js'
import { MCP_PATH } from '../../src/runtime/mcpserver/mcp-endpoint.js'
import { buildRoute } from '../../src/runtime/registry/build-route.js'
import type { MCPServerBinding } from '../../src/runtime/sessions/prepared-runtime.js'
import { eventually } from '../support/eventually.js'
import { listenOverNode, startEndpoint, TOOLS, type Harness, type NodeServer } from './mcp-endpoint-harness.js'

/**
 * watchConnectors against the real connector endpoint in-process (real
 * registry, session tokens, listen streams) on a real loopback listener.
 */
let h: Harness
let node: NodeServer
let watch: ConnectorWatch | undefined
beforeEach(async () => {
  h = await startEndpoint()
  node = await listenOverNode(h.endpoint, { front: true })
})
afterEach(async () => {
  await watch?.close()
  watch = undefined
  await node.close()
  await h.close()
})

const binding = (port = node.port, token = h.token): MCPServerBinding => ({
  name: 'connector',
  type: 'http',
  url: `http://127.0.0.1:${port}${MCP_PATH}`,
  headers: { Authorization: `Bearer ${token}` },
})
let generation = 10
const change = (key = 'other') =>
  h.registry.commit(buildRoute(key, ++generation, h.upstream, TOOLS.slice(0, 1 + (generation % 3))))

/** A loopback relay in front of the endpoint whose connections can be cut while it keeps listening. */
async function relay(to: number) {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(to, '127.0.0.1')
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {})
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => [...sockets].forEach((s) => s.destroy()),
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      for (const s of sockets) s.destroy()
      return closed
    },
  }
}

it('onChange runs once per change of the connector tools, and the stream is the session’s own', async () => {
  let runs = 0
  watch = await watchConnectors(() => void runs++, { runtime: { mcpServers: [binding()] } })
  expect(h.endpoint.openStreams).toBe(1)
  change()
  expect(
    await eventually(
      () => runs,
      (n) => n >= 1,
    ),
  ).toBe(1)
  change('third')
  expect(
    await eventually(
      () => runs,
      (n) => n >= 2,
    ),
  ).toBe(2)
})

it('close(): the stream ends at the server, no onChange afterwards, ended resolves undefined', async () => {
  let runs = 0
  watch = await watchConnectors(() => void runs++, { runtime: { mcpServers: [binding()] } })
  await watch.close()
  expect(await watch.ended).toBeUndefined()
  expect(
    await eventually(
      () => h.endpoint.openStreams,
      (n) => n === 0,
    ),
  ).toBe(0)
  // a watcher that still listened would run within the notifier's window; a second listener proves the change was sent
  const witness = await watchConnectors(() => void witnessRuns++, { runtime: { mcpServers: [binding()] } })
  let witnessRuns = 0
  change()
  await eventually(
    () => witnessRuns,
    (n) => n >= 1,
  )
  await witness.close()
  expect(runs).toBe(0)
})

it('an onChange that throws is reported to onError and the watch goes on', async () => {
  const errors: unknown[] = []
  let runs = 0
  watch = await watchConnectors(
    () => {
      if (++runs === 1) throw new Error('reload refused')
    },
    { runtime: { mcpServers: [binding()] }, onError: (e) => errors.push(e) },
  )
  change()
  await eventually(
    () => errors.length,
    (n) => n >= 1,
  )
  change('third')
  expect(
    await eventually(
      () => runs,
      (n) => n >= 2,
    ),
  ).toBe(2)
  expect(errors).toEqual([new Error('reload refused')])
})

it('a stream cut without our close is reopened, and onChange runs once for what may have been missed', async () => {
  const r = await relay(node.port)
  let runs = 0
  watch = await watchConnectors(() => void runs++, { runtime: { mcpServers: [binding(r.port)] } })
  r.cut()
  expect(
    await eventually(
      () => runs,
      (n) => n >= 1,
    ),
  ).toBe(1)
  // the reopened stream delivers (the server drops the cut one only at its next keep-alive write)
  change()
  expect(
    await eventually(
      () => runs,
      (n) => n >= 2,
    ),
  ).toBe(2)
  await watch.close()
  await r.close()
})

it('a revoked session: the watch ends with a DAEMON_UNREACHABLE reason that does not carry the token', async () => {
  let runs = 0
  watch = await watchConnectors(() => void runs++, { runtime: { mcpServers: [binding()] } })
  await h.sessions.revoke({ all: true })
  const reason = await watch.ended
  expect(reason).toBeInstanceOf(TuttiError)
  expect(reason!.code).toBe('DAEMON_UNREACHABLE')
  expect(reason!.message).toMatch(/could not be reopened/)
  expect(reason!.message).not.toContain(h.token)
  expect(runs).toBe(0)
})

it('bad input and an unreachable server are clear errors at once', async () => {
  const plain = await watchConnectors(() => {}, { runtime: { mcpServers: [] } }).catch((e: unknown) => e)
  expect(plain).toBeInstanceOf(TuttiError)
  expect((plain as TuttiError).code).toBe('ARGUMENT_INVALID')

  const wrongToken = await watchConnectors(() => {}, {
    runtime: { mcpServers: [binding(node.port, 'tutti_not-a-session-token')] },
  }).catch((e: unknown) => e)
  expect((wrongToken as TuttiError).code).toBe('DAEMON_UNREACHABLE')
  expect((wrongToken as TuttiError).message).not.toContain('tutti_not-a-session-token')

  const closed = await relay(node.port)
  const port = closed.port
  await closed.close()
  const down = await watchConnectors(() => {}, { runtime: { mcpServers: [binding(port)] } }).catch((e: unknown) => e)
  expect((down as TuttiError).code).toBe('DAEMON_UNREACHABLE')
})
