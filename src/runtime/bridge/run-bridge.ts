import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import type { Readable, Writable } from 'node:stream'
import { ownLayers } from '../client/sessions.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import { TOKEN_ENV } from '../names.js'
import { statePaths } from '../paths.js'
import { sessionPrepareMessage } from '../control-protocol/session-prepare.js'
import { Intake } from './intake.js'
import { LineSplitter } from './line-splitter.js'
import { McpBridge } from './mcp-bridge.js'

/**
 * When the client closes its end, answers still on their way get this long
 * to arrive (a client that closes stdin may still read them: `… | tutti
 * session bridge`); a client ending the server for good sends SIGTERM.
 */
const DRAIN_ON_EOF_MS = 10_000

const ENDING_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

export interface BridgeRunOptions {
  stateDir: string
  /** Defaults: the working directory (its real path), and a fresh random session id: one session per bridge process. */
  workspace?: string
  session?: string
  /** The bridge's view (see session exec): only these connectors, not these. */
  connectors?: string[]
  hideConnectors?: string[]
  /** The session sees this one connector under its server's own names. */
  as?: string
  input?: Readable
  output?: Writable
  log?: (line: string) => void
}

/**
 * `tutti session bridge` until the client is done with it: stdin's end
 * (after the answers in flight, bounded) or SIGTERM/SIGINT/SIGHUP (at
 * once). Its session is revoked on the way out.
 */
export async function runBridge(options: BridgeRunOptions): Promise<void> {
  const workspace = options.workspace ?? fs.realpathSync(process.cwd())
  const session = options.session ?? randomUUID()
  const ids = sessionPrepareMessage.request.safeParse({ provider: 'bridge', workspace, session })
  if (!ids.success)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `--workspace/--session: ${ids.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
    )
  // a view that names what is not in a project file is refused before stdin is read
  const { connectors, hideConnectors, as } = options
  const view = ownLayers({ workspace, connectors, hideConnectors, as })
  const parentToken = process.env[TOKEN_ENV] || undefined
  const identity = { workspace, session, ...(view.length ? { view } : {}), ...(parentToken ? { parentToken } : {}) }
  const input = options.input ?? process.stdin
  const output = options.output ?? process.stdout
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  let refusal: string | undefined
  let refuse: (() => void) | undefined
  const refused = (reason: string): void => {
    refusal ??= reason
    refuse?.()
  }
  const settled = (): void => intake.flow()
  const paths = statePaths(options.stateDir)
  const bridge = new McpBridge({ paths, identity, output, log, refused, settled })
  const intake = new Intake({
    input,
    backlog: bridge.backlog,
    load: bridge,
    log,
    take: (line) => (line.kind === 'line' ? bridge.line(line.bytes) : bridge.oversized()),
  })

  const splitter = new LineSplitter()
  const handlers: Array<[NodeJS.Signals, () => void]> = []
  const ended = new Promise<'eof' | 'signal' | 'refused'>((resolve) => {
    refuse = () => resolve('refused')
    input.on('data', (chunk: Buffer) => intake.push(splitter.push(chunk)))
    input.once('end', () => resolve('eof'))
    input.once('close', () => resolve('eof'))
    input.once('error', () => resolve('eof'))
    // the client went away (EPIPE): nobody reads the answers; `on`, as every later write fails the same way
    output.on('error', () => resolve('signal'))
    for (const signal of ENDING_SIGNALS) {
      const handler = () => resolve('signal')
      handlers.push([signal, handler])
      process.once(signal, handler)
    }
  })
  const started = bridge.start()
  const why = await ended
  if (why === 'eof') {
    let timer: NodeJS.Timeout | undefined
    // the first link's outcome too: a view the daemon refuses is an exit 2 even for a client that closed at once
    const drained = Promise.all([intake.idle(), started])
    await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_ON_EOF_MS)))])
    clearTimeout(timer)
  }
  intake.close()
  await bridge.close()
  for (const [signal, handler] of handlers) process.off(signal, handler)
  input.destroy()
  if (refusal !== undefined) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, refusal)
}
