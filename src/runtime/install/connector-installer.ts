import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import { loadRelease, type LoadedRelease } from '../manifest/load.js'
import type { StatePaths } from '../paths.js'
import type { ConnectorStore, InstallResult, RecordedRuntime } from '../store/connector-store.js'
import { copyEntries, removeTree, storeRelease } from '../store/release-store.js'
import { ARCHIVE, unpackArchive } from '../store/unpack-archive.js'
import { checkDependencies, installDependencies } from './npm-dependencies.js'
import { recordEnvironment } from './recorded-environment.js'
import { locateCommand, recordedCommand } from './resolve-command.js'

export interface InstallOptions {
  /** The installing shell's environment: PATH for commands and npm, npm's config, proxies. */
  env: NodeJS.ProcessEnv
  /** Progress lines for a person watching (dependency installs take seconds). */
  progress?: (line: string) => void
}

export type InstallOutcome = InstallResult & { dependencies?: { count: number; ms: number } }

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

  async install(source: string, options: InstallOptions): Promise<InstallOutcome> {
    const scratch: Array<() => Promise<void>> = []
    try {
      let root = source
      if (ARCHIVE.test(source)) {
        const unpacked = await unpackArchive(source, this.paths.tmpDir)
        scratch.push(unpacked.cleanup)
        root = unpacked.root
      }
      let release = await loadRelease(root)
      let dependencies: InstallOutcome['dependencies']
      const check = await checkDependencies(release.root)
      if (check.missing.length) {
        // npm writes into the tree, so a directory source is copied first (an unpacked archive is already ours)
        if (root === source) {
          const staged = await this.stage(release)
          scratch.push(() => removeTree(staged))
          root = staged
        }
        const { key } = release.manifest
        options.progress?.(`installing ${check.total} npm ${check.total === 1 ? 'dependency' : 'dependencies'} of ${key}…`)
        const done = await installDependencies(root, check, { scripts: release.manifest.npm.scripts, env: options.env, key })
        options.progress?.(`installed the dependencies of ${key} in ${(done.ms / 1000).toFixed(1)} s (${done.command})`)
        release = await loadRelease(root)
        dependencies = { count: check.total, ms: done.ms }
      }
      const located = await locateCommand(release, options.env.PATH)
      const stored = await storeRelease(this.paths, release)
      const runtime: RecordedRuntime = { environment: recordEnvironment(options.env) }
      const command = recordedCommand(located, stored.dir)
      if (command) runtime.command = command
      const result: InstallOutcome = await this.store.record(stored, runtime)
      if (dependencies) result.dependencies = dependencies
      return result
    } finally {
      // temporary copies under tmp/: a leftover is removed by the next install, and must not hide the outcome
      for (const cleanup of scratch.reverse()) await cleanup().catch(() => undefined)
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

  private async stage(release: LoadedRelease): Promise<string> {
    const dir = path.join(this.paths.tmpDir, `stage-${release.manifest.key}-${randomBytes(4).toString('hex')}`)
    await ensurePrivateDir(this.paths.tmpDir)
    await copyEntries(release.root, dir, release.entries)
    return dir
  }
}
