import { ErrorCodes, TuttiError } from '../errors.js'
import { loadRelease, type LoadedRelease } from '../manifest/load.js'
import { authVariableNames } from '../manifest/schema.js'
import type { StatePaths } from '../paths.js'
import { storeRelease } from './release-store.js'
import { ARCHIVE, unpackArchive } from './unpack-archive.js'
import { readCredentials, readInstalled, updateState, type InstalledConnector } from './state-files.js'

export interface InstallResult {
  key: string
  version: string
  digest: string
  /** false when the same content was already the installed release. */
  changed: boolean
  previousDigest?: string
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
    const release = await loadRelease(this.paths.releaseDir(key, digest))
    this.releases.set(digest, release)
    return release
  }

  /** Install from a release directory or a `.tgz` archive of one. */
  async install(source: string): Promise<InstallResult> {
    if (!ARCHIVE.test(source)) return this.installDir(source)
    const unpacked = await unpackArchive(source, this.paths.tmpDir)
    try {
      return await this.installDir(unpacked.root)
    } finally {
      await unpacked.cleanup()
    }
  }

  private async installDir(sourceDir: string): Promise<InstallResult> {
    const source = await loadRelease(sourceDir)
    const stored = await storeRelease(this.paths, source)
    const { key, version, name } = stored.release.manifest
    return updateState<InstallResult>(this.paths, async ({ installed }) => {
      const previous = installed.connectors[key]
      if (previous?.digest === stored.digest) {
        return { result: { key, version, digest: stored.digest, changed: false } }
      }
      installed.connectors[key] = { key, name, version, digest: stored.digest, installedAt: new Date().toISOString() }
      const result: InstallResult = { key, version, digest: stored.digest, changed: true }
      if (previous) result.previousDigest = previous.digest
      return { result, installedChanged: true }
    })
  }

  async uninstall(key: string): Promise<{ key: string; removedCredentials: boolean }> {
    return updateState(this.paths, async ({ installed, credentials }) => {
      if (!installed.connectors[key]) throw notInstalled(key)
      delete installed.connectors[key]
      const removedCredentials = key in credentials.connectors
      delete credentials.connectors[key]
      return { result: { key, removedCredentials }, installedChanged: true, credentialsChanged: removedCredentials }
    })
  }

  /** Store credentials for declared auth variables; values are merged into what is stored. */
  async connect(key: string, values: Record<string, string>): Promise<{ key: string; variables: string[]; ready: boolean }> {
    if (Object.keys(values).length === 0) throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, 'connect needs at least one --env NAME=VALUE or --from-env NAME')
    const current = await this.get(key)
    const declared = authVariableNames(current.release.manifest)
    if (declared.length === 0) throw new TuttiError(ErrorCodes.CREDENTIAL_INVALID, `connector "${key}" declares no credentials (auth.kind is "none")`)
    for (const [name, value] of Object.entries(values)) {
      if (!declared.includes(name)) throw new TuttiError(ErrorCodes.CREDENTIAL_INVALID, `connector "${key}" does not declare the variable ${name} (declared: ${declared.join(', ')})`)
      if (value === '') throw new TuttiError(ErrorCodes.CREDENTIAL_INVALID, `the value for ${name} is empty`)
    }
    return updateState(this.paths, async ({ installed, credentials }) => {
      if (!installed.connectors[key]) throw notInstalled(key)
      const merged = { ...credentials.connectors[key], ...values }
      credentials.connectors[key] = merged
      const ready = declared.every((n) => merged[n])
      return { result: { key, variables: Object.keys(merged).sort(), ready }, credentialsChanged: true }
    })
  }

  async disconnect(key: string): Promise<{ key: string; removed: boolean }> {
    return updateState(this.paths, async ({ installed, credentials }) => {
      if (!installed.connectors[key]) throw notInstalled(key)
      const removed = key in credentials.connectors
      delete credentials.connectors[key]
      return { result: { key, removed }, credentialsChanged: removed }
    })
  }

  async get(key: string): Promise<InstalledRelease> {
    const installed = (await readInstalled(this.paths)).connectors[key]
    if (!installed) throw notInstalled(key)
    const credentials = (await readCredentials(this.paths)).connectors[key] ?? {}
    return { installed, release: await this.loadStored(key, installed.digest), credentials }
  }

  /** Every installed connector with its release (sorted by key). */
  async list(): Promise<ListedConnector[]> {
    const [installed, credentials] = await Promise.all([readInstalled(this.paths), readCredentials(this.paths)])
    const out: ListedConnector[] = []
    for (const key of Object.keys(installed.connectors).sort()) {
      const entry = installed.connectors[key]!
      const listed: ListedConnector = { installed: entry, credentials: credentials.connectors[key] ?? {} }
      try {
        listed.release = await this.loadStored(key, entry.digest)
      } catch (err) {
        listed.loadError = (err as Error).message
      }
      out.push(listed)
    }
    return out
  }
}

function notInstalled(key: string): TuttiError {
  return new TuttiError(ErrorCodes.CONNECTOR_NOT_INSTALLED, `connector "${key}" is not installed`)
}

