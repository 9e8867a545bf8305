import type { ChildProcess } from 'node:child_process'
import { accessSync, constants, existsSync } from 'node:fs'
import path from 'node:path'
import { serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client'
import { ErrorCodes, TuttiError } from '../errors.js'
import { spawnInGroup, stopGroup } from '../proc/process-group.js'
import { StdinBatch } from './stdin-batch.js'
import { StdioMessageReader } from './stdio-message-reader.js'

export interface StdioTransportOptions {
  command: string
  args: readonly string[]
  cwd: string
  env: NodeJS.ProcessEnv
  /** Largest single message accepted from the server. */
  maxMessageBytes: number
  /** How long to wait after ending stdin, and after TERM, before escalating. */
  closeGraceMs: number
  /** Each whole line the server writes to stderr (the connector's log). */
  onStderrLine?: (line: string) => void
}

const STDERR_TAIL_BYTES = 4096

/**
 * An MCP stdio client transport whose server runs in its own process group.
 * The SDK's StdioClientTransport keeps the child in our group and signals
 * only the direct child, which leaks grandchildren; this one closes by
 * ending stdin, then TERM, then KILL of the whole group.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /**
   * Takes a message off the stream before the SDK client sees it (a direct call's answer, direct-calls.ts); true when
   * taken.
   */
  intercept?: (message: JSONRPCMessage) => boolean
  /**
   * Answers a message the SDK client sends instead of writing it (a direct call's answer replayed for the SDK to
   * decode).
   */
  answerLocally?: (message: JSONRPCMessage) => JSONRPCMessage | undefined

  private child?: ChildProcess
  private batch?: StdinBatch
  private readonly reader: StdioMessageReader
  private stderr = ''
  /** The start of a stderr line whose newline has not come yet. */
  private partialLine = ''
  private closed = false
  private exitInfo?: string
  /** Why tutti gave up on the server's stdout, if it did. */
  private broken?: string

  constructor(private readonly options: StdioTransportOptions) {
    this.reader = new StdioMessageReader(options.maxMessageBytes)
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  /** The last few KiB the server wrote to stderr, for error messages. */
  stderrTail(): string {
    return this.stderr.trim()
  }

  /** The first line it wrote to stdout that was not JSON-RPC, if any (a banner, or an HTTP server's address). */
  stdoutNoise(): string | undefined {
    return this.reader.firstNoise
  }

  /** How the process ended, once it has ("exited with code 1", "killed by SIGKILL"). */
  exit(): string | undefined {
    return this.broken ?? this.exitInfo
  }

  start(): Promise<void> {
    if (this.child) throw new TuttiError(ErrorCodes.INTERNAL, 'transport already started')
    // checked here, not by spawn: the command may run through a wrapper (proc/process-group.ts)
    if (path.isAbsolute(this.options.command)) {
      try {
        accessSync(this.options.command, constants.X_OK)
      } catch (err) {
        // rejected below with what is wrong with the command
        const code = (err as NodeJS.ErrnoException).code
        this.exitInfo = `command "${this.options.command}" ${code === 'ENOENT' ? 'not found' : 'is not executable'}`
        return Promise.reject(new TuttiError(ErrorCodes.UPSTREAM_FAILED, this.exitInfo))
      }
    }
    return new Promise((resolve, reject) => {
      const child = spawnInGroup(this.options.command, this.options.args, {
        cwd: this.options.cwd,
        env: this.options.env,
      })
      this.child = child
      this.batch = new StdinBatch(child.stdin!)
      child.once('error', (err: NodeJS.ErrnoException) => {
        this.exitInfo = spawnFailure(this.options.command, this.options.cwd, err)
        reject(new TuttiError(ErrorCodes.UPSTREAM_FAILED, this.exitInfo))
        this.onerror?.(err)
        this.finish()
      })
      child.once('spawn', () => resolve())
      child.once('exit', (code, signal) => {
        this.exitInfo = signal ? `killed by ${signal}` : `exited with code ${code}`
        // a crashed leader may leave children behind in its group
        if (!this.closed && child.pid !== undefined) void stopGroup(child.pid, 0)
        this.finish()
      })
      child.stdout!.on('data', (chunk: Buffer) => {
        if (this.closed || this.broken) return
        let messages: JSONRPCMessage[]
        try {
          messages = this.reader.push(chunk)
        } catch (err) {
          // the connection is broken: stop reading, and the connector restarts with backoff
          this.broken = `stdout: ${(err as Error).message}`
          child.stdout!.destroy()
          this.onerror?.(err as Error)
          void this.close()
          return
        }
        for (const msg of messages) if (!this.intercept?.(msg)) this.onmessage?.(msg)
      })
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8')
        this.stderr = (this.stderr + text).slice(-STDERR_TAIL_BYTES)
        this.splitStderr(text)
      })
      child.stderr!.once('end', () => this.splitStderr('\n'))
      child.stdin!.on('error', (err) => this.onerror?.(err))
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin
    // a plain Error: through the SDK it becomes a tool call's answer, which asProtocolError prefixes with the
    // connector only when it is not a TuttiError (mcpserver/tool-service.ts)
    if (!stdin || this.closed) return Promise.reject(new Error('not connected'))
    const local = this.answerLocally?.(message)
    if (local) {
      // after the SDK client has registered the request it is sending
      queueMicrotask(() => this.onmessage?.(local))
      return Promise.resolve()
    }
    // behind every line queued before it, and written now: the SDK's own messages are few
    this.batch!.push(serializeMessage(message))
    return new Promise((resolve) => {
      if (this.batch!.flush()) resolve()
      else stdin.once('drain', resolve)
    })
  }

  /** Write one serialized message (with its newline) without waiting for the pipe; false when not connected. */
  writeLine(line: string): boolean {
    const stdin = this.child?.stdin
    if (!stdin || this.closed || stdin.destroyed) return false
    this.batch!.push(line)
    return true
  }

  async close(): Promise<void> {
    const child = this.child
    if (child?.pid !== undefined) {
      this.batch?.flush()
      child.stdin?.end()
      await stopGroup(child.pid, this.options.closeGraceMs)
    }
    this.finish()
  }

  private splitStderr(text: string): void {
    const sink = this.options.onStderrLine
    if (!sink) return
    const lines = (this.partialLine + text).split('\n')
    this.partialLine = lines.pop()!
    // a line that never ends is passed on in pieces, not held without bound
    if (this.partialLine.length > STDERR_TAIL_BYTES) {
      lines.push(this.partialLine)
      this.partialLine = ''
    }
    for (const line of lines) if (line.trim()) sink(line.replace(/\r$/, ''))
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }
}

/** spawn says ENOENT for a missing working directory too: name the one that is missing. */
function spawnFailure(command: string, cwd: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT' && !existsSync(cwd)) return `working directory "${cwd}" of "${command}" does not exist`
  const why =
    err.code === 'ENOENT'
      ? 'not found'
      : err.code === 'EACCES'
        ? 'is not executable'
        : `could not be started (${err.message})`
  return `command "${command}" ${why}`
}
