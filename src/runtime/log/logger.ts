import fs from 'node:fs'
import type { LoggedEvent } from './connector-log.js'
import { Redactor } from './redactor.js'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface Logger {
  readonly redactor: Redactor
  child(component: string): Logger
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

export interface Sink {
  /** `record`: the line's object, for a sink that routes by its fields. */
  write(line: string, record: Record<string, unknown>): void
}

const MAX_LOG_BYTES = 10 * 1024 * 1024

/** Append-only NDJSON file; rotates once to `.1` when it grows past 10 MiB at open. */
export function fileSink(file: string): Sink {
  try {
    if (fs.statSync(file).size > MAX_LOG_BYTES) fs.renameSync(file, `${file}.1`)
  } catch {
    // no log yet
  }
  const fd = fs.openSync(file, 'a', 0o600)
  return {
    write(line) {
      try {
        fs.writeSync(fd, line)
      } catch {
        // logging must never take the daemon down
      }
    },
  }
}

/** Every record about one connector (a `connector` field) also goes to that connector's own log. */
export function withConnectorLogs(sink: Sink, logs: { event(key: string, record: LoggedEvent): void }): Sink {
  return {
    write(line, record) {
      sink.write(line, record)
      const { connector, component: _component, ...event } = record
      if (typeof connector === 'string') logs.event(connector, event as LoggedEvent)
    },
  }
}

export function memorySink(lines: string[]): Sink {
  return { write: (line) => void lines.push(line) }
}

/** NDJSON logger: one object a line, tagged with the component, secrets redacted. */
export function createLogger(
  sink: Sink,
  redactor = new Redactor(),
  component = 'daemon',
  minLevel: LogLevel = 'info',
): Logger {
  const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (order[level] < order[minLevel]) return
    const record = {
      time: new Date().toISOString(),
      level,
      component,
      msg: redactor.redactString(msg),
      ...(fields ? (redactor.redact(fields) as object) : {}),
    }
    sink.write(`${JSON.stringify(record)}\n`, record)
  }
  return {
    redactor,
    child: (name) => createLogger(sink, redactor, name, minLevel),
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
  }
}
