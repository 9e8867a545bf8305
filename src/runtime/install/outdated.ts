import semver from 'semver'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { StatePaths } from '../paths.js'
import { npmVersions, pickVersion, type NpmVersions } from '../sources/npm-view.js'
import { serverJsonNpmPackage } from '../sources/server-json-source.js'
import { npmOriginSpec, type InstallOrigin } from '../store/install-origin.js'
import { readInstalled, type InstalledConnector } from '../store/state-files.js'

/** npm queries at once: each is a node process, and the machine may have two cores. */
const QUERY_CONCURRENCY = 4

/**
 * `connector outdated`: each connector installed from `npm:` or from a
 * server.json's npm package against the registry, with npm's columns.
 * `wanted` is what `update` installs: what an `npm:` spec resolves to now,
 * or a server.json package's latest (the document pins one version, so
 * there is no range to honour). `latest` is the `latest` tag.
 */
export interface OutdatedConnector {
  key: string
  installed: string
  wanted: string | null
  latest: string | null
  /** The source as it was installed (`npm:<name>[@<spec>]`, or the server.json's path). */
  source: string
  /** `wanted` differs from the installed version. */
  outdated: boolean
  /** Why the registry could not say (the query failed); the other connectors are still compared. */
  error?: string
  origin: InstallOrigin
}

/** How a connector is compared: its npm package, the spec `update` follows, the version it runs. */
interface Comparison {
  name: string
  spec: string | undefined
  installed: string
  /** A server.json package: only a newer version is an update (its pin is not a range). */
  newerOnly: boolean
}

const reinstall = (key: string, how: string) => `connector "${key}" was installed ${how}`

/** How a connector is compared with the registry, or why it cannot be. */
async function comparison(key: string, entry: InstalledConnector): Promise<Comparison | string> {
  const origin = entry.origin
  if (!origin) return reinstall(key, 'before tutti recorded how; install it again once from npm:<name> to update it')
  const npm = npmOriginSpec(origin.source)
  if (npm) return { name: npm.name, spec: npm.spec, installed: entry.version, newerOnly: false }
  if (entry.source?.kind === 'server.json') {
    // the message is reported as why this connector cannot be compared
    const pkg = await serverJsonNpmPackage(origin.source, origin.server).catch((err: Error) => err.message)
    if (typeof pkg === 'string') return `connector "${key}" cannot be compared: ${origin.source}: ${pkg}`
    const installed = origin.packageVersion ?? pkg.version ?? entry.version
    return { name: pkg.identifier, spec: undefined, installed, newerOnly: true }
  }
  return reinstall(key, `from ${origin.source}, not from npm:<name> or a server.json; install the new version from it`)
}

async function compare(key: string, entry: InstalledConnector, how: Comparison, env: NodeJS.ProcessEnv) {
  const origin = entry.origin!
  const row = { key, installed: how.installed, source: origin.source, origin }
  let found: NpmVersions
  try {
    found = await npmVersions(how.name, env)
  } catch (err) {
    // reported in the row's error; one failed query does not stop the others
    return { ...row, wanted: null, latest: null, outdated: false, error: (err as Error).message.split('\n')[0]! }
  }
  const latest = found.distTags.latest ?? null
  const picked = pickVersion(found, how.spec) ?? null
  const newer =
    picked !== null && semver.valid(picked) && semver.valid(how.installed) && semver.gt(picked, how.installed)
  const wanted = how.newerOnly && !newer ? how.installed : picked
  return { ...row, wanted, latest, outdated: wanted !== null && wanted !== how.installed }
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
    const how = await comparison(key, entry)
    if (typeof how === 'string') {
      if (keys) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, how)
      continue
    }
    rows.push(() => compare(key, entry, how, env))
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
