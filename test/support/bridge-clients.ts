import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { spawn, type ChildProcess } from 'node:child_process'
import readline from 'node:readline'
import { eventually } from './eventually.js'
import { BIN, tuttiEnv } from './tutti.js'

export type Era = 'legacy' | 'modern'

/** Every session token has this shape: a text without it holds none of them. */
export const TOKEN_SHAPE = /tutti_[A-Za-z0-9_-]{43}/

/**
 * An SDK v2 client that starts `tutti session bridge` as its stdio server:
 * a 2025-06-18 client (initialize), or a 2026-07-28 one (server/discover,
 * `_meta` on every request). The bridge's stderr is kept for the test.
 */
export async function bridgeClient(
  stateDir: string,
  era: Era,
  options: { args?: string[]; onToolsChanged?: () => void } = {},
) {
  const client = new Client(
    { name: `bridge-test-${era}`, version: '1' },
    era === 'legacy'
      ? { supportedProtocolVersions: ['2025-06-18'] }
      : { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  if (options.onToolsChanged)
    client.setNotificationHandler('notifications/tools/list_changed', () => options.onToolsChanged!())
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'session', 'bridge', ...(options.args ?? [])],
    env: tuttiEnv(stateDir) as Record<string, string>,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  let closed = false
  transport.onclose = () => (closed = true)
  await client.connect(transport)
  return { client, transport, pid: transport.pid!, stderr: () => stderr, closed: () => closed }
}

/** `tutti session bridge` driven line by line: what it answers to exactly the bytes a test writes. */
export class RawBridge {
  readonly messages: any[] = []
  readonly lines: string[] = []
  stderr = ''
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>

  private constructor(readonly child: ChildProcess) {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(line)
      try {
        this.messages.push(JSON.parse(line))
      } catch {
        this.messages.push({ unparsable: line })
      }
    })
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()))
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  }

  static start(stateDir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): RawBridge {
    return new RawBridge(
      spawn(process.execPath, [BIN, 'session', 'bridge', ...args], {
        env: tuttiEnv(stateDir, env),
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    )
  }

  send(message: object | string): void {
    this.child.stdin!.write(
      `${typeof message === 'string' ? message : JSON.stringify({ jsonrpc: '2.0', ...message })}\n`,
    )
  }

  /** The first message (from `from` on) that `ok` holds for. */
  async next(ok: (m: any) => boolean, from = 0): Promise<any> {
    const found = await eventually(
      () => this.messages.slice(from).find(ok),
      (m) => m !== undefined,
    )
    if (found === undefined)
      throw new Error(
        `no such message from the bridge; it wrote: ${this.lines.join('\n').slice(-2000)}\nstderr: ${this.stderr}`,
      )
    return found
  }

  answer(id: unknown): Promise<any> {
    return this.next((m) => m.id === id && ('result' in m || 'error' in m))
  }

  end(): void {
    this.child.stdin!.end()
  }
}

export const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-stdio', version: '1' },
}
