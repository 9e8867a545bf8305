import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DaemonClient } from '../../src/runtime/client/daemon-client.js'
import { availableMessage } from '../../src/runtime/control-protocol/available.js'
import { doctorSnapshotMessage } from '../../src/runtime/control-protocol/doctor.js'
import { healthMessage } from '../../src/runtime/control-protocol/health.js'
import type { ControlMessage } from '../../src/runtime/control-protocol/message.js'
import { reconcileMessage } from '../../src/runtime/control-protocol/reconcile.js'
import { sessionPrepareMessage } from '../../src/runtime/control-protocol/session-prepare.js'
import { sessionRevokeMessage } from '../../src/runtime/control-protocol/session-revoke.js'
import { statusMessage } from '../../src/runtime/control-protocol/status.js'
import { toolTableMessage } from '../../src/runtime/control-protocol/tool-table.js'
import { faultConnector, probeConnector } from '../support/fixture-connector.js'
import { cleanupState, EXAMPLES, readDaemonJson, tempStateDir, tuttiJson } from '../support/tutti.js'

/**
 * Every control answer of a real daemon matches its message's response
 * schema (the CLI trusts the shapes once the versions matched, so the
 * daemon must keep them): ready, needs-auth, failed, disabled and CLI-only connectors.
 */
let dir: string
let client: DaemonClient
beforeAll(async () => {
  dir = tempStateDir('control-schemas')
  await tuttiJson(dir, ['connector', 'install', path.join(EXAMPLES, 'notes')])
  await tuttiJson(dir, ['connector', 'install', probeConnector('probe')])
  await tuttiJson(dir, ['connector', 'install', probeConnector('locked', { auth: ['LOCKED_KEY'] })])
  await tuttiJson(dir, ['connector', 'install', probeConnector('off')])
  await tuttiJson(dir, ['connector', 'disable', 'off'])
  await tuttiJson(dir, [
    'connector',
    'install',
    faultConnector({
      key: 'broken',
      manifest: { mcp: { transport: 'stdio', command: 'node', args: ['-e', 'process.exit(1)'] } },
    }),
    '--no-wait',
  ])
  client = new DaemonClient(readDaemonJson(dir)!)
})
afterAll(async () => {
  await cleanupState(dir)
})

const cases: Array<[ControlMessage<unknown, unknown>, unknown]> = [
  [healthMessage, {}],
  [statusMessage, {}],
  [availableMessage, {}],
  [reconcileMessage, { keys: ['notes', 'locked', 'probe', 'broken'], waitMs: 10_000 }],
  [reconcileMessage, {}],
  [doctorSnapshotMessage, {}],
  [sessionPrepareMessage, { provider: 'codex', workspace: 'w', session: 'schemas' }],
  [sessionRevokeMessage, { session: 'schemas' }],
  [toolTableMessage, { key: 'notes' }],
  [toolTableMessage, { key: 'locked' }],
]

it.each(cases.map(([m, req]) => [m.name, m, req] as const))(
  '%s answers in its response schema',
  async (_name, message, request) => {
    const answer = await client.call<typeof message>(message.name as never, request as never)
    const parsed = message.response.safeParse(answer)
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true)
  },
)
