import { ErrorCodes, TuttiError } from '../errors.js'
import type { StatePaths } from '../paths.js'
import { npmVersions, pickVersion } from '../sources/npm-view.js'
import { npmOriginSpec, type InstallOrigin } from '../store/install-origin.js'
import { readInstalled } from '../store/state-files.js'

/** npm queries at once: each is a node process, and the machine may have two cores. */
const QUERY_CONCURRENCY = 4

/**
 * `connector outdated`: each connector installed from `npm:` against the
 * registry, with npm's columns. `wanted` is what its recorded spec
 * resolves to now (what `update` installs), `latest` the `latest` tag.
 */
export interface OutdatedConnector {
  key: string
  installed: string
  wanted: string | null
  latest: string | null
  /** The source as it was installed (`npm:<name>[@<spec>]`). */
  source: string
  /** `wanted` differs from the installed version. */
  outdated: boolean
  /** Why the registry could not say (the query failed); the other connectors are still compared. */
  error?: string
  origin: InstallOrigin
}

/** Why a connector cannot be compared with a registry, or undefined when it can. */
function notUpdatable(key: string, origin: InstallOrigin | undefined): string | undefined {
  if (!origin) {
    const again = 'install it again once from npm:<name> to update it'
    return `connector "${key}" was installed before tutti recorded how; ${again}`
  }
  if (npmOriginSpec(origin.source)) return undefined
  return `connector "${key}" was installed from ${origin.source}, not from npm:<name>; install the new version from it`
  return undefined
}

export async function outdatedConnectors(
  paths: StatePaths,
  env: NodeJS.ProcessEnv,
  keys?: string[],
): Promise<OutdatedConnector[]> {
  const installed = (await readInstalled(paths)).connectors
  const chosen = keys ?? Object.keys(installed).sort()
  const rows: Array<() => Promise<OutdatedConnector>> = []
  for (const key of chosen) {
    const entry = installed[key]
    if (!entry) throw new TuttiError(ErrorCodes.CONNECTOR_NOT_INSTALLED, `connector "${key}" is not installed`)
    const why = notUpdatable(key, entry.origin)
    if (why) {
      if (keys) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, why)
      continue
    }
    const origin = entry.origin!
    const npm = npmOriginSpec(origin.source)!
    rows.push(async () => {
      const row = { key, installed: entry.version, source: origin.source, origin }
      try {
        const found = await npmVersions(npm.name, env)
        const wanted = pickVersion(found, npm.spec) ?? null
        const outdated = wanted !== null && wanted !== entry.version
        return { ...row, wanted, latest: found.distTags.latest ?? null, outdated }
      } catch (err) {
        return { ...row, wanted: null, latest: null, outdated: false, error: (err as Error).message.split('\n')[0]! }
      }
    })
  }
  const out: OutdatedConnector[] = new Array(rows.length)
  let next = 0
  const worker = async () => {
    while (next < rows.length) {
      const i = next++
      out[i] = await rows[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(QUERY_CONCURRENCY, rows.length) }, worker))
  return out
}
