import semver from 'semver'
import { npmVersions, pickVersion } from '../sources/npm-view.js'
import { deriveKey } from '../sources/source-key.js'
import type { ConnectorStore, InstallResult, RecordedRuntime } from '../store/connector-store.js'
import { installOrigin, npmOriginSpec, sameOrigin } from '../store/install-origin.js'
import type { StoredRelease } from '../store/release-store.js'
import type { LoadedRelease } from '../manifest/load.js'

export interface ReinstallOptions {
  env: NodeJS.ProcessEnv
  key?: string
  server?: string
  args?: string[]
  allowScripts?: boolean
  replace?: boolean
}

/**
 * `install npm:<name>[@<spec>]` again, the same way, when the version it
 * resolves to is the one installed: nothing is fetched. An exact version
 * needs no query at all; a range or a tag needs one `npm view`. The
 * runtime (command, environment) is still re-resolved and recorded, as a
 * full reinstall would. undefined: install it in full.
 */
export async function unchangedNpmReinstall(
  source: string,
  options: ReinstallOptions,
  store: ConnectorStore,
  resolveRuntime: (release: LoadedRelease) => Promise<RecordedRuntime>,
): Promise<InstallResult | undefined> {
  const npm = npmOriginSpec(source)
  if (!npm || options.replace) return undefined
  let key: string
  try {
    key = deriveKey(npm.name, options.key)
  } catch {
    return undefined // the full install says what is wrong with the name
  }
  const entry = await store.entry(key)
  const origin = installOrigin(source, options)
  const samePackage = entry?.source?.kind === 'npm package' && entry.source.name === npm.name
  if (!entry?.source || !samePackage || !sameOrigin(entry.origin, origin)) return undefined
  const exact = npm.spec !== undefined && semver.valid(npm.spec) ? semver.clean(npm.spec) : undefined
  // a failed query is not an answer: the full install asks again and says what went wrong
  const offered = exact ? undefined : await npmVersions(npm.name, options.env).catch(() => undefined)
  const wanted = exact ?? (offered ? pickVersion(offered, npm.spec) : undefined)
  if (wanted === undefined || wanted !== entry.version) return undefined
  // an unreadable release is replaced by a full install
  const installed = await store.get(key).catch(() => undefined)
  if (!installed) return undefined
  const stored: StoredRelease = { digest: entry.digest, dir: installed.release.root, release: installed.release }
  const claim = { source: entry.source, checked: { digest: entry.digest, same: true }, origin }
  return store.record(stored, await resolveRuntime(installed.release), claim)
}
