import path from 'node:path'
import type { StatePaths } from '../paths.js'
import type { sessionPrepareMessage, Provider } from '../protocol/session-prepare.js'
import type { sessionRevokeMessage } from '../protocol/session-revoke.js'
import { TOKEN_ENV, type PreparedRuntime } from '../sessions/prepared-runtime.js'
import { ensureDaemon, findDaemon } from './ensure-daemon.js'

export interface PrepareRequest {
  provider: Provider
  workspace: string
  session: string
}

/** `tutti session prepare|revoke`: tokens come from the daemon; the runtime is assembled here. */
export class Sessions {
  constructor(private readonly paths: StatePaths) {}

  async prepare(req: PrepareRequest): Promise<PreparedRuntime> {
    const daemon = await ensureDaemon(this.paths)
    const issued = await daemon.call<typeof sessionPrepareMessage>('session-prepare', req)
    return {
      provider: req.provider,
      workspace: req.workspace,
      session: req.session,
      env: {
        PATH: `${this.paths.binDir}${path.delimiter}${process.env.PATH ?? ''}`,
        [TOKEN_ENV]: issued.token,
      },
      mcpServers: [{ name: 'connector', type: 'http', url: issued.url, headers: { Authorization: `Bearer ${issued.token}` } }],
      skillRoots: issued.skillRoots,
    }
  }

  /** Revoking needs no running daemon: with none, there is nothing live to revoke from. */
  async revoke(filter: { session?: string; workspace?: string; all?: boolean }): Promise<{ revoked: number }> {
    const daemon = (await findDaemon(this.paths)) ?? (await ensureDaemon(this.paths))
    return daemon.call<typeof sessionRevokeMessage>('session-revoke', filter)
  }
}
