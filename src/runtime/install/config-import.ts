import fs from 'node:fs/promises'
import { ErrorCodes, isTuttiError, TuttiError } from '../errors.js'
import { manifestSchema, missingCredentials, type ConnectorManifest } from '../manifest/schema.js'
import type { StatePaths } from '../paths.js'
import type { ClientConfig, ClientEntry } from '../sources/client-configs/client-entry.js'
import { entrySource, type ImportedSource } from '../sources/client-configs/entry-source.js'
import type { ConnectorStore } from '../store/connector-store.js'
import { keyTaken, sameSource } from '../store/source-identity.js'
import type { ConnectorInstaller, InstallOptions, PrepareSource } from './connector-installer.js'
import { installedSource } from './installed-source.js'

/**
 * `install --from <client>`: every server of a client's config installed
 * as its own connector, each with its own outcome: one bad entry does not
 * stop the others. Literal credentials of the config go to the 0600 store.
 */
export type EntryOutcome = 'installed' | 'updated' | 'already installed' | 'would install' | 'not imported' | 'failed'

export interface ImportedEntry {
  name: string
  origin: string
  key?: string
  version?: string
  outcome: EntryOutcome
  reason?: string
  /** Parts of the entry tutti does not carry, one sentence each. */
  skipped: string[]
  /** Credentials whose values the config held, stored (their names only). */
  storedCredentials: string[]
  /** Declared credentials that still need a value (`connect KEY --env NAME=…`). */
  needs: string[]
  /** Dry run: the manifest the connector would have. */
  manifest?: ConnectorManifest | Record<string, unknown>
}

export interface ConfigImportOptions extends Omit<InstallOptions, 'key' | 'server' | 'args'> {
  /** `--only`: these servers of the config, by name. */
  only?: readonly string[]
  /** `--key`: with one server only. */
  key?: string
  dryRun: boolean
}

export class ConfigImport {
  constructor(
    private readonly paths: StatePaths,
    private readonly store: ConnectorStore,
    private readonly installer: ConnectorInstaller,
  ) {}

  async run(config: ClientConfig, options: ConfigImportOptions): Promise<ImportedEntry[]> {
    const selected = select(config, options)
    if (options.key !== undefined && selected.length !== 1) {
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `--key names one connector, and ${selected.length} servers are selected; choose one with --only NAME`,
      )
    }
    const out: ImportedEntry[] = config.passed
      .filter((p) => !options.only || options.only.includes(p.name))
      .map((p) => ({ ...p, outcome: 'not imported', skipped: [], storedCredentials: [], needs: [] }))
    const keys = new Map<string, string>()
    for (const entry of selected) {
      const result: ImportedEntry = {
        name: entry.name,
        origin: entry.origin,
        outcome: 'failed',
        skipped: [],
        storedCredentials: [],
        needs: [],
      }
      try {
        await this.one(config.kind, entry, options, result, keys)
      } catch (err) {
        if (!isTuttiError(err) && !(err instanceof Error)) throw err
        result.outcome = 'failed'
        result.reason = err.message
      }
      out.push(result)
    }
    return out
  }

  private async one(
    kind: string,
    entry: ClientEntry,
    options: ConfigImportOptions,
    result: ImportedEntry,
    keys: Map<string, string>,
  ): Promise<void> {
    let imported: ImportedSource | undefined
    const prepare: PrepareSource = async (o) => {
      imported = await entrySource(entry, kind, {
        ...(options.key !== undefined ? { key: options.key } : {}),
        scratchDir: o.scratchDir,
      })
      const { generated } = imported
      result.key = String(generated.manifest.key)
      result.skipped = generated.skipped
      const other = keys.get(result.key)
      if (other !== undefined)
        throw new TuttiError(
          ErrorCodes.CONNECTOR_KEY_TAKEN,
          `its key "${result.key}" is also the key of "${other}" in this import; ` +
            `import it alone with --only ${entry.name} --key OTHER`,
        )
      keys.set(result.key, entry.name)
      return { root: generated.root, generated, cleanup: () => fs.rm(generated.root, { recursive: true, force: true }) }
    }
    const { only: _only, key: _key, dryRun, ...install } = options
    if (dryRun) {
      const outcome = await this.installer.dryRunFrom(entry.name, prepare, install)
      const credentials = imported!.credentials
      result.manifest = outcome.manifest
      // validated by the dry run already: this only fills in the defaults
      const manifest = manifestSchema.parse(outcome.manifest)
      await this.checkClaim(manifest, imported!, options)
      result.outcome = 'would install'
      result.storedCredentials = Object.keys(credentials).sort()
      result.needs = missingCredentials(manifest, credentials)
      return
    }
    const installed = await this.installer.installFrom(entry.name, prepare, install)
    result.version = installed.version
    result.outcome = !installed.changed ? 'already installed' : installed.previousDigest ? 'updated' : 'installed'
    const credentials = imported!.credentials
    if (Object.keys(credentials).length) {
      const current = await this.store.get(installed.key)
      const runtime = await this.installer.resolveRuntime(current.release, options.env)
      await this.store.connect(installed.key, { credentials, settings: {}, runtime })
      result.storedCredentials = Object.keys(credentials).sort()
    }
    const now = await this.store.get(installed.key)
    result.needs = missingCredentials(now.release.manifest, now.credentials)
  }

  /** Dry run: another package under the key would be refused, as the install would. */
  private async checkClaim(
    manifest: ConnectorManifest,
    imported: ImportedSource,
    options: ConfigImportOptions,
  ): Promise<void> {
    const taken = await installedSource(this.store, this.paths, manifest.key)
    if (taken && !options.replace && !sameSource(taken.source, imported.generated.source, manifest.name))
      throw keyTaken(manifest.key, taken.source, imported.generated.source)
  }
}

/** The entries `--only` names (each must exist), else all. */
function select(config: ClientConfig, options: ConfigImportOptions): ClientEntry[] {
  if (!options.only) return config.entries
  const names = new Set([...config.entries, ...config.passed].map((e) => e.name))
  const unknown = options.only.filter((n) => !names.has(n))
  if (unknown.length) {
    const have = [...names].join(', ') || 'none'
    const quoted = unknown.map((n) => `"${n}"`).join(', ')
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `--only: no server ${quoted} in ${config.files.join(', ')}; its servers: ${have}`,
    )
  }
  return config.entries.filter((e) => options.only!.includes(e.name))
}
