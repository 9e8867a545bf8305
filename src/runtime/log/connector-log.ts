import fs from 'node:fs'
import path from 'node:path'
import type { StatePaths } from '../paths.js'
import type { Redactor } from './redactor.js'

/**
 * One connector's own log, for `tutti connector logs`: one NDJSON record a
 * line, either a line its upstream wrote to stderr (`source: "stderr"`) or
 * an event tutti logged about it (`source: "tutti"`). Every record is
 * redacted before it is written, so the file holds no credential.
 */
export interface LoggedEvent {
  time: string
  level?: string
  msg: string
  [field: string]: unknown
}

export type ConnectorLogRecord = LoggedEvent & { source: 'stderr' | 'tutti' }

/** A chatty server must not fill the disk: past this the file rotates once to `.1` (two files at most). */
export const CONNECTOR_LOG_MAX_BYTES = 1024 * 1024
/** A single stderr line (a minified stack, a dumped blob) is cut here: a log line is for a person to read. */
export const STDERR_LINE_MAX_CHARS = 8 * 1024
/** The rotated file beside `file`. */
export const rotatedLog = (file: string): string => `${file}.1`

interface OpenLog {
  fd: number
  size: number
}

/** The daemon's writer of every connector's log; files are opened on first use and kept open. */
export class ConnectorLogs {
  private readonly open = new Map<string, OpenLog>()
  /** Installed connectors: what comes after an uninstall (a retired upstream's last words) is not kept. */
  private readonly installed = new Set<string>()

  constructor(
    private readonly paths: StatePaths,
    private readonly redactor: Redactor,
  ) {}

  /** A line the upstream wrote to stderr. */
  stderr(key: string, line: string): void {
    const text = line.length > STDERR_LINE_MAX_CHARS ? `${line.slice(0, STDERR_LINE_MAX_CHARS)}… [cut]` : line
    this.append(key, { time: new Date().toISOString(), source: 'stderr', msg: this.redactor.redactString(text) })
  }

  /** An event tutti logged about the connector (already redacted by the logger). */
  event(key: string, record: LoggedEvent): void {
    this.append(key, { ...record, source: 'tutti' })
  }

  /** The connector is installed: its lines are kept from now on. */
  track(key: string): void {
    this.installed.add(key)
  }

  /** The connector is gone (uninstalled): its log goes with it, and nothing more is written for it. */
  remove(key: string): void {
    this.installed.delete(key)
    this.close(key)
    const file = this.paths.connectorLog(key)
    for (const f of [file, rotatedLog(file)]) fs.rmSync(f, { force: true })
  }

  closeAll(): void {
    for (const key of [...this.open.keys()]) this.close(key)
  }

  private append(key: string, record: ConnectorLogRecord): void {
    if (!this.installed.has(key)) return
    const line = `${JSON.stringify(record)}\n`
    try {
      let log = this.open.get(key) ?? this.openLog(key)
      if (log.size > 0 && log.size + Buffer.byteLength(line) > CONNECTOR_LOG_MAX_BYTES) log = this.rotate(key)
      log.size += fs.writeSync(log.fd, line)
    } catch {
      // a connector's log must never take the daemon (or the upstream's stderr pipe) down
    }
  }

  private openLog(key: string): OpenLog {
    const file = this.paths.connectorLog(key)
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const fd = fs.openSync(file, 'a', 0o600)
    const log = { fd, size: fs.fstatSync(fd).size }
    this.open.set(key, log)
    return log
  }

  private rotate(key: string): OpenLog {
    this.close(key)
    const file = this.paths.connectorLog(key)
    fs.renameSync(file, rotatedLog(file))
    return this.openLog(key)
  }

  private close(key: string): void {
    const log = this.open.get(key)
    this.open.delete(key)
    if (log) fs.closeSync(log.fd)
  }
}
