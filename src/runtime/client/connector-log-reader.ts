import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { assertConnectorKey } from '../connector-key.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import { rotatedLog, type ConnectorLogRecord } from '../log/connector-log.js'
import type { StatePaths } from '../paths.js'
import { readInstalled } from '../store/state-files.js'

/**
 * fs.watch is the trigger for new lines; on file systems where it misses
 * changes (some network and container mounts) this slow look catches them.
 */
const FOLLOW_BACKSTOP_MS = 1_000

type OnRecord = (record: ConnectorLogRecord) => void

/** Where a follow has read up to in the current file: the end of its last whole line. */
export interface LogPosition {
  ino: number
  offset: number
}

/**
 * `tutti connector logs`: what the daemon wrote to one connector's log
 * (log/connector-log.ts), read straight from the state directory, so it
 * works whether or not a daemon runs. The file is only ever appended to and
 * rotated once to `.1`, which a reader and a follow take into account.
 */
export class ConnectorLogReader {
  constructor(private readonly paths: StatePaths) {}

  /** The last `count` lines (of both files), oldest first; refuses a connector that is not installed. */
  async last(key: string, count: number): Promise<{ records: ConnectorLogRecord[]; position: LogPosition }> {
    await this.assertInstalled(key)
    const file = this.paths.connectorLog(key)
    const current = await readLines(file, 0)
    let texts = lines(current.text)
    if (texts.length < count) texts = [...lines((await readLines(rotatedLog(file), 0)).text), ...texts]
    const records = texts.slice(-count).flatMap(parse)
    return { records, position: { ino: current.ino, offset: current.end } }
  }

  /** Each line written after `position`, until `signal` aborts (Ctrl-C) or the connector is uninstalled. */
  async follow(key: string, position: LogPosition, onRecord: OnRecord, signal: AbortSignal): Promise<void> {
    const file = this.paths.connectorLog(key)
    let at = position
    let reading = Promise.resolve()
    let end = () => {}
    const look = () => {
      reading = reading.then(async () => {
        // the connector was uninstalled: its directory (and log) are gone, nothing more will come
        if (!fs.existsSync(path.dirname(file))) return end()
        at = await this.readNew(file, at, onRecord)
      })
    }
    const watcher = fs.watch(path.dirname(file), look)
    const backstop = setInterval(look, FOLLOW_BACKSTOP_MS)
    look()
    try {
      await new Promise<void>((resolve) => {
        end = resolve
        if (signal.aborted) return resolve()
        signal.addEventListener('abort', () => resolve(), { once: true })
        watcher.on('error', () => resolve())
      })
    } finally {
      watcher.close()
      clearInterval(backstop)
    }
    await reading
  }

  /** What was appended since `at`; after a rotation, the rest of the rotated file first, then the new one. */
  private async readNew(file: string, at: LogPosition, onRecord: OnRecord): Promise<LogPosition> {
    // no log yet, or rotated away this instant: nothing new, the next poll looks again
    const stat = await fsp.stat(file).catch(() => undefined)
    if (!stat) return at
    let { offset } = at
    if (stat.ino !== at.ino || stat.size < offset) {
      // the rotated file may be gone: its rest is lost, and reading starts on the new file
      const rotated = await fsp.stat(rotatedLog(file)).catch(() => undefined)
      const rest = rotated?.ino === at.ino ? await readLines(rotatedLog(file), offset) : undefined
      if (rest) lines(rest.text).flatMap(parse).forEach(onRecord)
      offset = 0
    }
    const next = await readLines(file, offset)
    lines(next.text).flatMap(parse).forEach(onRecord)
    return { ino: next.ino || stat.ino, offset: next.end }
  }

  private async assertInstalled(key: string): Promise<void> {
    assertConnectorKey(key)
    const installed = await readInstalled(this.paths)
    if (!installed.connectors[key]) {
      const hint = 'tutti connector available lists the installed ones'
      throw new TuttiError(ErrorCodes.CONNECTOR_NOT_INSTALLED, `connector "${key}" is not installed (${hint})`)
    }
  }
}

const lines = (text: string): string[] => text.split('\n').filter((l) => l.trim())

/** A line that is not a record (a torn write after a crash) is skipped, not shown as garbage. */
function parse(line: string): ConnectorLogRecord[] {
  try {
    const record = JSON.parse(line) as ConnectorLogRecord
    return record && typeof record.msg === 'string' ? [record] : []
  } catch {
    // a torn line is skipped, as the doc comment says
    return []
  }
}

/**
 * The whole lines of `file` from byte `offset` on, and the offset after
 * the last of them: a line the daemon is still writing is read next time.
 */
async function readLines(file: string, offset: number): Promise<{ text: string; ino: number; end: number }> {
  // gone between stat and open: nothing to read this time
  const handle = await fsp.open(file, 'r').catch(() => undefined)
  if (!handle) return { text: '', ino: 0, end: offset }
  try {
    const { size, ino } = await handle.stat()
    if (size <= offset) return { text: '', ino, end: offset }
    const buffer = Buffer.alloc(size - offset)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset)
    const whole = buffer.subarray(0, bytesRead).lastIndexOf(0x0a) + 1
    return { text: buffer.subarray(0, whole).toString('utf8'), ino, end: offset + whole }
  } finally {
    await handle.close()
  }
}
