import { createHash } from 'node:crypto'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { LoadedRelease } from '../manifest/load.js'
import type { RouteClient } from '../registry/route.js'
import type { UpstreamSpec } from '../upstream/upstream-spec.js'

/** What the state on disk asks of one active connector. */
export interface DesiredConnector {
  release: LoadedRelease
  digest: string
  spec: UpstreamSpec | undefined
  /** Declared settings with their values (for status; the spec already carries them). */
  settings?: Record<string, string>
}

/** The route client of a connector without an MCP server: it has no tools, so it is never called. */
export const NO_UPSTREAM: RouteClient = {
  callTool: async () => {
    throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, 'this connector has no MCP server')
  },
}

/** One hash for everything that makes a desired state different (release, command, environment, credentials, settings). */
export function specHash(desired: DesiredConnector): string {
  return createHash('sha256').update(desired.digest).update(JSON.stringify(desired.spec ?? null)).digest('hex')
}
