import { assertConnectorKey } from '../connector-key.js'
import type { KeyValues } from '../manifest/given-keys.js'
import { loadInstalledRelease, type LoadedRelease } from '../manifest/load.js'
import { authVariableNames, secretSettingNames, settingNames } from '../manifest/schema.js'
import type { StatePaths } from '../paths.js'
import { checkConnectInput } from './connect-input.js'
import { carryVisibility } from './connector-visibility.js'
import { moveSecretSettings, splitSecretSettings } from './secret-settings.js'
import type { StoredRelease } from './release-store.js'
import { notInstalled } from './not-installed.js'
import { setAside, type ReplacedConnector } from './replaced-connector.js'
import { sameOrigin, type InstallOrigin } from './install-origin.js'
import { keyTaken, sameSource, type SourceIdentity } from './source-identity.js'
import { readCredentials, readInstalled, updateState, type InstalledConnector } from './state-files.js'

/** What the installing (or connecting) shell resolved for a connector's upstream. */
export interface RecordedRuntime {
  /** Absolute command, for stdio connectors whose command is not "node". */
  command?: string
  environment: Record<string, string>
}

export interface ConnectInput {
  credentials: Record<string, string>
  settings: Record<string, string>
  runtime: RecordedRuntime
}

function sameRecord(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean {
  if (!a) return false
  const keys = Object.keys(b)
  return keys.length === Object.keys(a).length && keys.every((k) => a[k] === b[k])
}

/** Stored settings the (new) manifest still declares; undefined when none is left. */
function keepDeclared(
  settings: Readonly<Record<string, string>> | undefined,
  declared: readonly string[],
): Record<string, string> | undefined {
  const kept = Object.fromEntries(Object.entries(settings ?? {}).filter(([name]) => declared.includes(name)))
  return Object.keys(kept).length ? kept : undefined
}

export interface InstallResult {
  key: string
  version: string
  digest: string
  /** false when the same content was already the installed release. */
  changed: boolean
  previousDigest?: string
  /** The version it replaced under the key, when the release changed (upgraded, downgraded or rebuilt). */
  previousVersion?: string
  /** Another package's connector this install replaced (--replace): nothing of it was carried over. */
  replaced?: ReplacedConnector
}

/** Which package a release is, and what the installer found under its key before it stored the release. */
export interface RecordRequest {
  source: SourceIdentity
  /**
   * The digest installed under the key when the installer checked it (none: the key was free), and whether that was the
   * same package.
   */
  checked: { digest?: string; same: boolean }
  /** `--replace`: another package under the key is replaced; `purge` deletes what it leaves instead of keeping it. */
  replace?: { purge: boolean }
  /** How it was installed (install-origin.ts), for `update`. */
  origin?: InstallOrigin
  /** Credentials and settings given with the install, split as the release declares them; merged into the stored. */
  keys?: KeyValues
}

export interface InstalledRelease {
  installed: InstalledConnector
  release: LoadedRelease
  credentials: Record<string, string>
}

export interface ListedConnector {
  installed: InstalledConnector
  /** Absent when the stored release can no longer be read; `loadError` says why. */
  release?: LoadedRelease
  loadError?: string
  credentials: Record<string, string>
}

/**
 * Installed connectors and their credentials. Every operation validates its
 * input before it writes anything, so bad input leaves the disk as it was.
 */
export class ConnectorStore {
  /** Releases are immutable per digest, so a validated load can be reused. */
  private readonly releases = new Map<string, LoadedRelease>()

  constructor(readonly paths: StatePaths) {}

  private async loadStored(key: string, digest: string): Promise<LoadedRelease> {
    const cached = this.releases.get(digest)
    if (cached) return cached
    const release = await loadInstalledRelease(this.paths.releaseDir(key, digest))
    this.releases.set(digest, release)
    return release
  }

  /**
   * Record a stored release as the installed one, with the command and
   * environment resolved for it. The same release with the same recorded
   * runtime is a no-op; settings carry over to a new release of the same
   * package. Another package under the key is refused, or with --replace
   * replaced by one that starts with nothing of the old one.
   */
  async record(stored: StoredRelease, runtime: RecordedRuntime, request: RecordRequest): Promise<InstallResult> {
    const { key, version, name } = stored.release.manifest
    return updateState<InstallResult>(this.paths, async ({ installed, credentials }, held) => {
      let previous: InstalledConnector | undefined = installed.connectors[key]
      // the installer's check holds unless another install changed the key since
      const same =
        !previous ||
        (previous.digest === request.checked.digest
          ? request.checked.same
          : !!previous.source && sameSource({ recorded: previous.source }, request.source, name))
      let replaced: ReplacedConnector | undefined
      let credentialsChanged = false
      if (previous && !same) {
        if (!request.replace)
          throw keyTaken(key, previous.source ?? { derived: { manifestName: previous.name } }, request.source)
        replaced = await setAside(
          this.paths,
          held,
          { entry: previous, credentials: credentials.connectors[key] },
          request.source,
          request.replace.purge,
        )
        credentialsChanged = key in credentials.connectors
        delete credentials.connectors[key]
        previous = undefined
      }
      const sameRuntime =
        previous?.command === runtime.command && sameRecord(previous?.environment, runtime.environment)
      const given = request.keys ?? { credentials: {}, settings: {} }
      if (Object.keys(given.credentials).length) {
        credentials.connectors[key] = { ...credentials.connectors[key], ...given.credentials }
        credentialsChanged = true
      }
      const sameSettings = Object.entries(given.settings).every(([name, v]) => previous?.settings?.[name] === v)
      const newOrigin = !!request.origin && !sameOrigin(previous?.origin, request.origin)
      if (previous?.digest === stored.digest && sameRuntime && sameSettings) {
        const result = { key, version, digest: stored.digest, changed: false }
        // an install recorded before sources (or origins) were learns its own here
        if (previous.source && !newOrigin) return { result, credentialsChanged }
        previous.source = request.source
        if (request.origin) previous.origin = request.origin
        return { result, installedChanged: true, credentialsChanged }
      }
      const entry: InstalledConnector = {
        key,
        name,
        version,
        digest: stored.digest,
        installedAt: new Date().toISOString(),
        environment: runtime.environment,
        source: request.source,
      }
      if (request.origin) entry.origin = request.origin
      else if (previous?.origin && previous.digest === stored.digest) entry.origin = previous.origin
      if (runtime.command) entry.command = runtime.command
      carryVisibility(previous, entry)
      const merged = { ...previous?.settings, ...given.settings }
      const settings = keepDeclared(merged, settingNames(stored.release.manifest))
      if (settings) entry.settings = settings
      const moved = moveSecretSettings(entry, secretSettingNames(stored.release.manifest))
      if (Object.keys(moved).length) {
        credentials.connectors[key] = { ...moved, ...credentials.connectors[key] }
        credentialsChanged = true
      }
      const result: InstallResult = { key, version, digest: stored.digest, changed: previous?.digest !== stored.digest }
      const before = previous ?? (replaced ? installed.connectors[key] : undefined)
      if (before && before.digest !== stored.digest) {
        result.previousDigest = before.digest
        result.previousVersion = before.version
      }
      if (replaced) result.replaced = replaced
      installed.connectors[key] = entry
      return { result, installedChanged: true, credentialsChanged }
    })
  }

  /** The install record under `key`, if any (no release is loaded). */
  async entry(key: string): Promise<InstalledConnector | undefined> {
    assertConnectorKey(key)
    return (await readInstalled(this.paths)).connectors[key]
  }

  async uninstall(key: string): Promise<{ key: string; removedCredentials: boolean }> {
    assertConnectorKey(key)
    return updateState(this.paths, async ({ installed, credentials }) => {
      if (!installed.connectors[key]) throw notInstalled(key, Object.keys(installed.connectors))
      delete installed.connectors[key]
      const removedCredentials = key in credentials.connectors
      delete credentials.connectors[key]
      return { result: { key, removedCredentials }, installedChanged: true, credentialsChanged: removedCredentials }
    })
  }

  /**
   * Store credentials (declared auth variables) and settings (declared
   * config), merged into what is stored, and the runtime re-resolved by the
   * connecting shell. Everything is checked before anything is written.
   */
  async connect(
    key: string,
    input: ConnectInput,
  ): Promise<{ key: string; variables: string[]; settings: string[]; ready: boolean }> {
    const current = await this.get(key)
    const manifest = current.release.manifest
    const declared = authVariableNames(manifest)
    const declaredSettings = settingNames(manifest)
    // a secret setting is kept with the credentials: --env, --from-env and --set all reach it
    const secretSettings = secretSettingNames(manifest)
    const { secrets, settings: publicInput } = splitSecretSettings(input, secretSettings)
    checkConnectInput(key, input, declared, declaredSettings, secretSettings)
    return updateState(this.paths, async ({ installed, credentials }) => {
      const entry = installed.connectors[key]
      if (!entry || entry.digest !== current.installed.digest)
        throw notInstalled(key, Object.keys(installed.connectors))
      const moved = moveSecretSettings(entry, secretSettings)
      const merged = { ...moved, ...credentials.connectors[key], ...secrets }
      const credentialsChanged = Object.keys(secrets).length > 0 || Object.keys(moved).length > 0
      if (credentialsChanged) credentials.connectors[key] = merged
      const settings = { ...entry.settings, ...publicInput }
      if (Object.keys(settings).length) entry.settings = settings
      entry.environment = input.runtime.environment
      if (input.runtime.command) entry.command = input.runtime.command
      else delete entry.command
      const ready = declared.every((n) => merged[n])
      const variables = Object.keys(merged)
        .filter((n) => !secretSettings.includes(n))
        .sort()
      const named = [...Object.keys(settings), ...secretSettings.filter((n) => merged[n] !== undefined)].sort()
      return { result: { key, variables, settings: named, ready }, credentialsChanged, installedChanged: true }
    })
  }

  async disconnect(key: string): Promise<{ key: string; removed: boolean }> {
    assertConnectorKey(key)
    return updateState(this.paths, async ({ installed, credentials }) => {
      if (!installed.connectors[key]) throw notInstalled(key, Object.keys(installed.connectors))
      const removed = key in credentials.connectors
      delete credentials.connectors[key]
      return { result: { key, removed }, credentialsChanged: removed }
    })
  }

  async get(key: string): Promise<InstalledRelease> {
    assertConnectorKey(key)
    const all = (await readInstalled(this.paths)).connectors
    const installed = all[key]
    if (!installed) throw notInstalled(key, Object.keys(all))
    const credentials = (await readCredentials(this.paths)).connectors[key] ?? {}
    return { installed, release: await this.loadStored(key, installed.digest), credentials }
  }

  /** Every installed connector with its release (sorted by key). */
  async list(): Promise<ListedConnector[]> {
    // installed.json before credentials.json, the reverse of the write order (state-files.ts): a connector
    // read here is never paired with credentials older than its install
    const installed = await readInstalled(this.paths)
    const credentials = await readCredentials(this.paths)
    const out: ListedConnector[] = []
    for (const key of Object.keys(installed.connectors).sort()) {
      const entry = installed.connectors[key]!
      const listed: ListedConnector = { installed: entry, credentials: credentials.connectors[key] ?? {} }
      try {
        listed.release = await this.loadStored(key, entry.digest)
      } catch (err) {
        // reported as this connector's loadError; the others still list
        listed.loadError = (err as Error).message
      }
      out.push(listed)
    }
    return out
  }
}
