import { createHash } from 'node:crypto'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { ToolFilterView } from '../control-protocol/connector-state.js'
import type { LoadedRelease } from '../manifest/load.js'
import type { RouteClient } from '../registry/route.js'
import type { ConnectorToolFilter } from '../registry/tool-filter.js'
import type { UpstreamSpec } from '../upstream/upstream-spec.js'

/** What the state on disk asks of one active connector. */
export interface DesiredConnector {
  release: LoadedRelease
  digest: string
  spec: UpstreamSpec | undefined
  /** Declared settings with their values (for status; the spec already carries them). */
  settings?: Record<string, string>
  /** A digest of the values the user gives (credentials, settings): a generation with other values may not serve on. */
  values?: string
  /**
   * The tool filter the route is built with. Not part of the spec hash: a new filter commits a new generation of
   * the same table, without a restart or a tool-cache miss.
   */
  filter?: ConnectorToolFilter
  /** The same filter as status shows it: who set what. */
  toolFilter?: ToolFilterView
}

/** The route client of a connector without an MCP server: it has no tools, so it is never called. */
export const NO_UPSTREAM: RouteClient = {
  callTool: async () => {
    throw new TuttiError(ErrorCodes.UPSTREAM_FAILED, 'this connector has no MCP server')
  },
}

/**
 * One hash for everything that makes a desired state different (release, command, environment, credentials, settings).
 */
export function specHash(desired: DesiredConnector): string {
  return createHash('sha256')
    .update(desired.digest)
    .update(JSON.stringify(desired.spec ?? null))
    .digest('hex')
}

/** The digest of the user's values, never the values: a change of them is told from an upgrade by it. */
type Values = Readonly<Record<string, string>>
export function valuesDigest(credentials: Values, settings: Values | undefined): string {
  const sorted = (r: Readonly<Record<string, string>>) => Object.entries(r).sort(([a], [b]) => a.localeCompare(b))
  return createHash('sha256')
    .update(JSON.stringify([sorted(credentials), sorted(settings ?? {})]))
    .digest('hex')
}

/** What a new desired state changes, as the connector's log tells it ("credentials or settings changed", …). */
export function changeOf(previous: DesiredConnector | undefined, next: DesiredConnector): string {
  const version = (d: DesiredConnector) => d.release.manifest.version
  if (!previous) return `starting release ${version(next)}`
  const what: string[] = []
  if (previous.digest !== next.digest) what.push(`release ${version(previous)} → ${version(next)}`)
  if (previous.values !== next.values) what.push('credentials or settings changed')
  return what.length ? `${what.join('; ')}: starting it` : `starting release ${version(next)} again`
}
