import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { ConnectorLogReader } from '../../src/runtime/client/connector-log-reader.js'
import {
  CONNECTOR_LOG_MAX_BYTES,
  ConnectorLogs,
  rotatedLog,
  type ConnectorLogRecord,
} from '../../src/runtime/log/connector-log.js'
import { createLogger, memorySink, withConnectorLogs } from '../../src/runtime/log/logger.js'
import { Redactor } from '../../src/runtime/log/redactor.js'
import { statePaths, type StatePaths } from '../../src/runtime/paths.js'
import { until } from '../support/eventually.js'

let paths: StatePaths
let logs: ConnectorLogs
const redactor = new Redactor()
/** ~200 bytes a record: a few thousand of them rotate the log. */
const LINE = 'x'.repeat(120)

beforeEach(() => {
  paths = statePaths(fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-connector-log-')))
  const installedAt = new Date().toISOString()
  const entry = { key: 'chat', name: 'Chat', version: '1.0.0', digest: 'a'.repeat(64), installedAt }
  fs.writeFileSync(paths.installedJson, JSON.stringify({ schemaVersion: 1, connectors: { chat: entry } }))
  logs = new ConnectorLogs(paths, redactor)
  logs.track('chat')
})
afterEach(() => {
  logs.closeAll()
  fs.rmSync(paths.root, { recursive: true, force: true })
})

it('rotates once past its cap: two files at most, each within it, the last lines read across both', async () => {
  const count = Math.ceil((CONNECTOR_LOG_MAX_BYTES * 2.5) / 200)
  for (let i = 0; i < count; i++) logs.stderr('chat', `${i} ${LINE}`)
  const file = paths.connectorLog('chat')
  expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['connector.log', 'connector.log.1'])
  for (const f of [file, rotatedLog(file)]) expect(fs.statSync(f).size).toBeLessThanOrEqual(CONNECTOR_LOG_MAX_BYTES)
  const current = fs.readFileSync(file, 'utf8').trim().split('\n').length
  const { records } = await new ConnectorLogReader(paths).last('chat', current + 3)
  const first = count - current - 3
  expect(records.map((r) => Number(r.msg.split(' ')[0]))).toEqual([...Array(current + 3).keys()].map((i) => first + i))
})

it('redacts every known secret in stderr, and the logger tees only records about a tracked connector', () => {
  redactor.addSecret('tok-abcdef-123')
  logs.stderr('chat', 'auth with tok-abcdef-123 ok')
  const daemonLines: string[] = []
  const log = createLogger(withConnectorLogs(memorySink(daemonLines), logs), redactor)
  log.warn('upstream exited', { connector: 'chat', reason: 'bad tok-abcdef-123' })
  log.info('not about a connector')
  log.info('about one never installed', { connector: 'other' })
  const text = fs.readFileSync(paths.connectorLog('chat'), 'utf8')
  expect(text).not.toContain('tok-abcdef-123')
  const records = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ConnectorLogRecord)
  const shown = records.map((r) => [r.source, r.msg])
  expect(shown).toEqual([
    ['stderr', 'auth with [redacted] ok'],
    ['tutti', 'upstream exited'],
  ])
  expect(records[1]).toMatchObject({ level: 'warn', reason: 'bad [redacted]' })
  expect(fs.existsSync(paths.connectorLog('other'))).toBe(false)
  expect(daemonLines).toHaveLength(3)
})

it('a follow gets every line in order, across a rotation, and ends when asked', async () => {
  logs.stderr('chat', 'before')
  const reader = new ConnectorLogReader(paths)
  const { position } = await reader.last('chat', 10)
  const seen: string[] = []
  const stop = new AbortController()
  const following = reader.follow('chat', position, (r) => seen.push(r.msg), stop.signal)
  const count = Math.ceil((CONNECTOR_LOG_MAX_BYTES * 1.5) / 200)
  for (let i = 0; i < count; i++) logs.stderr('chat', `${i} ${LINE}`)
  expect(fs.existsSync(rotatedLog(paths.connectorLog('chat')))).toBe(true)
  await until(() => seen.length >= count)
  stop.abort()
  await following
  expect(seen.map((m) => Number(m.split(' ')[0]))).toEqual([...Array(count).keys()])
})

it('a long stderr line is cut; an uninstalled connector keeps no log and gets no more lines', () => {
  logs.stderr('chat', 'y'.repeat(100_000))
  const [record] = fs
    .readFileSync(paths.connectorLog('chat'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  expect(record.msg.length).toBeLessThan(10_000)
  expect(record.msg.endsWith('… [cut]')).toBe(true)
  logs.remove('chat')
  logs.stderr('chat', 'after uninstall')
  expect(fs.existsSync(paths.connectorLog('chat'))).toBe(false)
})
