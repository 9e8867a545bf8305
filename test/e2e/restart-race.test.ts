import fs from 'node:fs'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { until } from '../support/eventually.js'
import { FAULT_TOOLS, lazyConnector } from '../support/fixture-connector.js'
import { prepared } from '../support/in-process.js'
import { modernPost, type Binding } from '../support/mcp-clients.js'
import { cleanupState, readDaemonJson, REPO, tempStateDir } from '../support/tutti.js'

let dir: string
afterAll(async () => {
  await cleanupState(dir)
})

/*
 * A daemon that crashed comes back on the same port, and clients (the bridge, an agent's MCP client)
 * call again at once. The first calls must wait for the start-up reconcile instead of finding no route:
 * "unknown tool" for a connector that is about to be published would look like a broken install.
 */
it('a call that reaches a restarted daemon before its start-up reconcile waits for it, and is answered', async () => {
  dir = tempStateDir('restart-race')
  const { ConnectorStore } = await import('../../src/runtime/store/connector-store.js')
  const { ConnectorInstaller } = await import('../../src/runtime/install/connector-installer.js')
  const { statePaths } = await import('../../src/runtime/paths.js')
  const installer = new ConnectorInstaller(statePaths(dir), new ConnectorStore(statePaths(dir)))
  // enough connectors that the start-up reconcile takes a while after the listener is up
  for (let i = 0; i < 40; i++)
    await installer.install(lazyConnector(`race-${String(i).padStart(2, '0')}`), { env: process.env })
  // preparing the session starts the first daemon
  const binding: Binding = (await prepared(dir, { workspace: 'w', session: 'race' })).mcpServers[0]!
  const old = readDaemonJson(dir)!
  process.kill(old.pid, 'SIGKILL')
  expect(
    await until(() => {
      try {
        process.kill(old.pid, 0)
        return false
      } catch {
        return true
      }
    }),
  ).toBe(true)
  // a new daemon, started as the CLI starts one; the call goes out the moment daemon.json names it
  const { spawnDaemon } = await import(path.join(REPO, 'dist/runtime/client/daemon-process.js'))
  await spawnDaemon(statePaths(dir))
  expect(
    await until(() => {
      const info = readDaemonJson(dir)
      return !!info && info.pid !== old.pid
    }),
  ).toBe(true)
  const last = `race-39_${FAULT_TOOLS[0]!.name}`
  let answer: Awaited<ReturnType<typeof modernPost>> | undefined
  for (let attempt = 0; attempt < 200 && !answer; attempt++) {
    answer = await modernPost(binding, 'tools/call', { name: last, arguments: { message: 'first' } }).catch(
      () => undefined,
    )
    // the listener may not accept yet for a few ms after daemon.json is written: only a refused connection is retried
  }
  expect(answer?.status).toBe(200)
  expect(JSON.stringify(answer?.json)).toContain('"text":"first"')
  const log = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8')
  expect(log).toMatch(/initial reconcile done/)
})
