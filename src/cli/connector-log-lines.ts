import type { ConnectorLogRecord } from '../runtime/log/connector-log.js'
import { terminalSafe } from './terminal-text.js'

/** Colour codes servers put in their stderr: dropped, the rest of a control sequence is shown escaped. */
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g

const SHOWN_APART = new Set(['time', 'source', 'level', 'msg'])

/**
 * One line of `tutti connector logs` as a person reads it:
 * `<time> stderr <what the server wrote>` or
 * `<time> tutti  [warn: ]<event> (field: value, …)`.
 */
export function connectorLogLine(record: ConnectorLogRecord): string {
  const fields = Object.entries(record)
    .filter(([name, value]) => !SHOWN_APART.has(name) && value !== undefined)
    .map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
  const level = record.level && record.level !== 'info' ? `${record.level}: ` : ''
  const text = `${level}${record.msg}${fields.length ? ` (${fields.join(', ')})` : ''}`
  return `${record.time} ${record.source.padEnd(6)} ${terminalSafe(text.replace(SGR, ''))}`
}
