import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import { loadRelease, type LoadedRelease } from '../manifest/load.js'
import { checkGivenKeys, splitGivenKeys, type GivenKey } from '../manifest/given-keys.js'
import { declareKeys, previousManifest } from './source-keys.js'
import type { ConnectorManifest } from '../manifest/schema.js'
import type { StatePaths } from '../paths.js'
import { prepareSource, type PreparedSource } from '../sources/install-source.js'
import type { SourceOptions } from '../sources/generated-source.js'
import { isUrlSource } from '../sources/url-source.js'
import type { ConnectorStore, InstallResult, RecordedRuntime, RecordRequest } from '../store/connector-store.js'
import { storeAndRecord } from '../store/release-pruning.js'
import { copyEntries, removeTree } from '../store/release-store.js'
import { installOrigin } from '../store/install-origin.js'
import { replacedNotice } from '../store/replaced-connector.js'
import { keyTaken, RELEASE_KIND, sameSource, sourceIdentity, type SourceIdentity } from '../store/source-identity.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import { noticeMapping, sourceSummary, writeGenerated, type SourceSummary } from './generated-release.js'
import { installedSource } from './installed-source.js'
import { installChange, type InstallChange } from './install-change.js'
import { ownInstallScripts, scriptedPackages, type ScriptedPackage } from './install-scripts.js'
import { checkDependencies, installDependencies } from './npm-dependencies.js'
import { recordEnvironment } from './recorded-environment.js'
import { unchangedNpmReinstall } from './unchanged-reinstall.js'
import { locateCommand, recordedCommand } from './resolve-command.js'

export interface InstallOptions {
  /** The installing shell's environment: PATH for commands and npm, npm's config, proxies. */
  env: NodeJS.ProcessEnv
  /** Progress lines for a person watching (dependency installs take seconds). */
  progress?: (line: string) => void
  /** Parts of a package tutti does not carry, one sentence each (stderr). */
  notice?: (line: string) => void
  /** For a package without a tutti manifest: the key, the server among several, extra server arguments. */
  key?: string
  server?: string
  args?: string[]
  /** The command form's command and arguments; a URL source's `--header` lines. */
  command?: string[]
  headers?: string[]
  /** `--env`, `--from-env`, `--secret`: stored with the install (a generated manifest declares them). */
  keys?: GivenKey[]
  /**
   * `--replace`: another package under the key is replaced (it leaves nothing to the new one); `--purge` deletes what
   * it leaves.
   */
  replace?: boolean
  purge?: boolean
  /** `--allow-scripts`: run the packages' install scripts (native builds), as the manifest's `npm.scripts` does. */
  allowScripts?: boolean
  /** `connector update` of a server.json npm package: the newer version to install. */
  packageVersion?: string
}

export type InstallOutcome = InstallResult & {
  change: InstallChange
  dependencies?: { count: number; ms: number }
  source?: SourceSummary
}

/**
 * `install --dry-run`: the manifest the release would have (as generated, or the release's own), validated, with
 * nothing written.
 */
export interface DryRunOutcome {
  dryRun: true
  manifest: ConnectorManifest | Record<string, unknown>
  generated: boolean
  source?: SourceSummary
  /** The packages that would run install scripts, and whether they would (`--allow-scripts`, `npm.scripts`). */
  installScripts: { packages: ScriptedPackage[]; run: boolean; unresolved?: string }
}

/** Makes a source's release directory under the scratch dir in `options`. */
export type PrepareSource = (options: SourceOptions) => Promise<PreparedSource>

/**
 * `connector install <dir|tgz>`: validate, make the release self-contained
 * (npm dependencies), resolve its command against the installing shell,
 * store it content-addressed and record it. Every step that can fail runs
 * before anything is written to the state directory.
 */
export class ConnectorInstaller {
  constructor(
    private readonly paths: StatePaths,
    private readonly store: ConnectorStore,
  ) {}

  /** `source` undefined: the command form (`options.command`). */
  async install(source: string | undefined, options: InstallOptions): Promise<InstallOutcome> {
    return this.installFrom(source, (o) => prepareSource(source, o), options)
  }

  /** `prepare` makes the release directory of `source` (a name for messages) under the scratch dir it is given. */
  async installFrom(
    source: string | undefined,
    prepare: PrepareSource,
    options: InstallOptions,
  ): Promise<InstallOutcome> {
    if (options.purge && !options.replace)
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        '--purge goes with --replace: it deletes what the replaced connector leaves',
      )
    // a bad name is refused before anything is fetched
    checkGivenKeys(options.keys ?? [])
    const resolve = (release: LoadedRelease) => this.resolveRuntime(release, options.env)
    // keys given with it are stored by the full install
    const quick = source !== undefined && !options.keys?.length
    const unchanged = quick ? await unchangedNpmReinstall(source, options, this.store, resolve) : undefined
    if (unchanged) return { ...unchanged, change: installChange(unchanged) }
    const scratch: Array<() => Promise<void>> = []
    // tmp/ is made only when a source needs it, and goes again if this made it: a refused install leaves nothing
    let madeTmp = false
    const scratchDir = async () => {
      if (
        !madeTmp &&
        !(await fs.stat(this.paths.tmpDir).then(
          () => true,
          () => false,
        ))
      )
        madeTmp = true
      await ensurePrivateDir(this.paths.tmpDir)
      return this.paths.tmpDir
    }
    scratch.push(async () => {
      // rmdir refuses tmp/ while another install uses it: then it stays, as it should
      if (madeTmp) await fs.rmdir(this.paths.tmpDir).catch(() => undefined)
    })
    try {
      const prepared = await prepare({ ...this.sourceOptions(options), scratchDir })
      scratch.push(prepared.cleanup)
      let root = prepared.root
      const keys = declareKeys(prepared, options.keys, await previousManifest(this.store, this.paths, prepared))
      if (prepared.generated) {
        root = await writeGenerated(prepared.generated, source, scratch, await scratchDir())
        noticeMapping(prepared.generated, options.notice)
      }
      let release = await loadRelease(root)
      const values = splitGivenKeys(release.manifest, keys)
      // before npm runs or anything is stored: another package under the key is refused with the state as it was
      const claimed = await this.claimKey(release.manifest, prepared.generated?.source, options)
      const claim = { ...claimed, ...(keys.length ? { keys: values } : {}) }
      let dependencies: InstallOutcome['dependencies']
      const check = await checkDependencies(release.root)
      const scripts = release.manifest.npm.scripts || !!options.allowScripts
      const ownScripts = scripts ? await ownInstallScripts(release.root) : []
      if (check.missing.length || ownScripts.length) {
        // npm writes into the tree, so a directory source is copied first (an unpacked archive or a generated release
        // is already ours)
        if (root === source) {
          const staged = await this.stage(release, await scratchDir())
          scratch.push(() => removeTree(staged))
          root = staged
        }
        const { key } = release.manifest
        const deps = `${check.total} npm ${check.total === 1 ? 'dependency' : 'dependencies'}`
        const scripted = scripts ? ' and running install scripts' : ''
        const step = check.missing.length ? `installing ${deps} of ${key}${scripted}` : `running the scripts of ${key}`
        options.progress?.(`${step}…`)
        const done = await installDependencies(root, check, { scripts, env: options.env, key })
        options.progress?.(`installed the dependencies of ${key} in ${(done.ms / 1000).toFixed(1)} s (${done.command})`)
        release = await loadRelease(root)
        dependencies = { count: check.total, ms: done.ms }
      }
      const located = await locateCommand(release, options.env.PATH)
      // a command or a URL has nothing to update from: no origin
      const origin = source !== undefined && !isUrlSource(source) ? { origin: installOrigin(source, options) } : {}
      const recorded = await storeAndRecord(this.paths, release, async (stored) => {
        const runtime: RecordedRuntime = { environment: recordEnvironment(options.env) }
        const command = recordedCommand(located, stored.dir)
        if (command) runtime.command = command
        return this.store.record(stored, runtime, { ...claim, ...origin })
      })
      const result: InstallOutcome = { ...recorded, change: installChange(recorded) }
      if (dependencies) result.dependencies = dependencies
      if (prepared.generated) result.source = sourceSummary(prepared.generated)
      if (result.replaced) options.notice?.(replacedNotice(result.key, result.replaced))
      return result
    } finally {
      // temporary copies under tmp/: a leftover is removed by the next install, and must not hide the outcome
      for (const cleanup of scratch.reverse()) await cleanup().catch(() => undefined)
    }
  }

  /** The manifest a source maps to, validated as the release loader would, with nothing written to the state dir. */
  async dryRun(source: string | undefined, options: InstallOptions): Promise<DryRunOutcome> {
    return this.dryRunFrom(source, (o) => prepareSource(source, o), options)
  }

  async dryRunFrom(
    source: string | undefined,
    prepare: PrepareSource,
    options: InstallOptions,
  ): Promise<DryRunOutcome> {
    checkGivenKeys(options.keys ?? [])
    const tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'tutti-dry-run-'))
    const scratch: Array<() => Promise<void>> = [() => fs.rm(tmpDir, { recursive: true, force: true })]
    try {
      const prepared = await prepare({ ...this.sourceOptions(options), scratchDir: async () => tmpDir })
      scratch.push(prepared.cleanup)
      const keys = declareKeys(prepared, options.keys, await previousManifest(this.store, this.paths, prepared))
      const root = prepared.generated
        ? await writeGenerated(prepared.generated, source, scratch, tmpDir)
        : prepared.root
      const release = await loadRelease(root)
      splitGivenKeys(release.manifest, keys)
      const found = await scriptedPackages(root, options.env, tmpDir)
      const installScripts = { ...found, run: release.manifest.npm.scripts || !!options.allowScripts }
      const manifest = prepared.generated?.manifest ?? release.manifest
      const described = prepared.generated ? { source: sourceSummary(prepared.generated) } : {}
      if (prepared.generated) noticeMapping(prepared.generated, options.notice)
      return { dryRun: true, manifest, generated: !!prepared.generated, ...described, installScripts }
    } finally {
      // temporary copies under tmp/: a leftover is removed by the next install, and must not hide the outcome
      for (const cleanup of scratch.reverse()) await cleanup().catch(() => undefined)
    }
  }

  /** Whether the key is free or holds the same package; another one is refused unless `--replace`. */
  private async claimKey(
    manifest: ConnectorManifest,
    generated: SourceIdentity | undefined,
    options: InstallOptions,
  ): Promise<RecordRequest> {
    const source = generated ?? sourceIdentity(RELEASE_KIND, manifest.name)
    const taken = await installedSource(this.store, this.paths, manifest.key)
    const same = !taken || sameSource(taken.source, source, manifest.name)
    if (!same && !options.replace) throw keyTaken(manifest.key, taken.source, source)
    const checked = { ...(taken ? { digest: taken.digest } : {}), same }
    return { source, checked, ...(options.replace ? { replace: { purge: !!options.purge } } : {}) }
  }

  private sourceOptions(options: InstallOptions) {
    return {
      env: options.env,
      ...(options.key !== undefined ? { key: options.key } : {}),
      ...(options.server !== undefined ? { server: options.server } : {}),
      ...(options.args?.length ? { args: options.args } : {}),
      ...(options.command?.length ? { command: options.command } : {}),
      ...(options.headers?.length ? { headers: options.headers } : {}),
      ...(options.packageVersion !== undefined ? { packageVersion: options.packageVersion } : {}),
    }
  }

  /** The command and environment a connect re-resolves for an installed release. */
  async resolveRuntime(release: LoadedRelease, env: NodeJS.ProcessEnv): Promise<RecordedRuntime> {
    const located = await locateCommand(release, env.PATH)
    const runtime: RecordedRuntime = { environment: recordEnvironment(env) }
    const command = recordedCommand(located, release.root)
    if (command) runtime.command = command
    return runtime
  }

  private async stage(release: LoadedRelease, tmpDir: string): Promise<string> {
    const dir = path.join(tmpDir, `stage-${release.manifest.key}-${randomBytes(4).toString('hex')}`)
    await copyEntries(release.root, dir, release.entries)
    return dir
  }
}
