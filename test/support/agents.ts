import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { REPO } from './tutti.js'

/** The real Codex binary from npm (@openai/codex's platform package). */
export function codexBinary(): string {
  const candidates = [
    path.join(REPO, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex'),
    path.join(REPO, 'node_modules/.bin/codex'),
  ]
  const found = candidates.find((p) => fs.existsSync(p))
  if (!found) throw new Error('codex is not installed (npm ci installs @openai/codex)')
  return found
}

/** The real Claude Code binary from npm (the platform package works even if the postinstall did not run). */
export function claudeBinary(): string {
  const candidates = [
    path.join(REPO, 'node_modules/@anthropic-ai/claude-code-linux-x64/claude'),
    path.join(REPO, 'node_modules/.bin/claude'),
  ]
  const found = candidates.find((p) => fs.existsSync(p))
  if (!found) throw new Error('claude is not installed (npm ci installs @anthropic-ai/claude-code)')
  return found
}

/**
 * What every Claude Code run of the tests gets. Offline: no plugin sync, no update checks, no telemetry. And its MCP
 * servers are connected before the first turn, for up to a minute: Claude Code connects them in the background by
 * default, so on a loaded machine a `-p` session (and its init message) could start while a server is still
 * `pending`, and the test would see the machine's speed, not tutti's behaviour.
 */
export const CLAUDE_OFFLINE = {
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  MCP_CONNECTION_NONBLOCKING: '0',
  MCP_TIMEOUT: '60000',
}

/** `codex app-server` over stdio: newline-delimited JSON-RPC. */
export class CodexAppServer {
  private next = 1
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
  readonly stderr: string[] = []
  /** Every notification the app-server sent (turn/completed, mcpServer/startupStatus/updated…), in order. */
  readonly notifications: Array<{ method: string; params: any }> = []

  private constructor(private readonly child: ChildProcess) {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      let msg: any
      try {
        msg = JSON.parse(line)
      } catch {
        return
      }
      if (msg.id === undefined && typeof msg.method === 'string')
        this.notifications.push({ method: msg.method, params: msg.params })
      if (msg.id === undefined || !this.pending.has(msg.id)) return
      const p = this.pending.get(msg.id)!
      this.pending.delete(msg.id)
      if (msg.error) p.reject(new Error(`${msg.error.code}: ${msg.error.message}`))
      else p.resolve(msg.result)
    })
    child.stderr!.on('data', (d: Buffer) => this.stderr.push(d.toString()))
  }

  static async start(env: NodeJS.ProcessEnv, cwd: string): Promise<CodexAppServer> {
    const child = spawn(codexBinary(), ['app-server', '--disable', 'plugins'], {
      env,
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const server = new CodexAppServer(child)
    await server.request('initialize', {
      clientInfo: { name: 'tutti-tests', title: null, version: '1' },
      capabilities: null,
    })
    child.stdin!.write(`${JSON.stringify({ method: 'initialized' })}\n`)
    return server
  }

  request(method: string, params?: unknown, timeoutMs = 30_000): Promise<any> {
    const id = this.next++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(
          new Error(`codex ${method}: no answer within ${timeoutMs} ms; stderr: ${this.stderr.join('').slice(-2000)}`),
        )
      }, timeoutMs)
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer)
          resolve(v)
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        },
      })
      this.child.stdin!.write(`${JSON.stringify(params === undefined ? { id, method } : { id, method, params })}\n`)
    })
  }

  async stop(): Promise<void> {
    this.child.stdin!.end()
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.child.kill('SIGKILL')
        resolve()
      }, 3000)
      this.child.once('exit', () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}
