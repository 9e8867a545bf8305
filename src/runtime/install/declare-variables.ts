import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import { declareGivenKeys, splitGivenKeys, type GivenKey } from '../manifest/given-keys.js'
import { loadRelease } from '../manifest/load.js'
import { authVariableNames, settingNames } from '../manifest/schema.js'
import { MANIFEST_FILE } from '../names.js'
import type { StatePaths } from '../paths.js'
import type { ConnectorStore, InstalledRelease, InstallResult } from '../store/connector-store.js'
import { storeAndRecord } from '../store/release-pruning.js'
import { copyEntries, removeTree } from '../store/release-store.js'
import { RELEASE_KIND } from '../store/source-identity.js'
import { walkRelease } from '../release/release-tree.js'
import { recordEnvironment } from './recorded-environment.js'
import { locateCommand, recordedCommand } from './resolve-command.js'

/** Whether tutti wrote the connector's manifest (from a package, plugin, server.json, command or URL). */
export const isGenerated = (current: InstalledRelease): boolean =>
  !!current.installed.source && current.installed.source.kind !== RELEASE_KIND

/** The given names its manifest does not declare. */
export function undeclared(current: InstalledRelease, keys: readonly GivenKey[]): GivenKey[] {
  const { manifest } = current.release
  const declared = new Set([...authVariableNames(manifest), ...settingNames(manifest)])
  return keys.filter((k) => !declared.has(k.name))
}

/**
 * `connect K --env NEW=…` on a generated connector: the manifest is tutti's,
 * so the next release generation declares NEW (a credential by
 * `isCredential`, else a setting), and it is recorded with the values in one
 * state update. The daemon then restarts the server with them. Nothing is
 * written to the state before every check has passed.
 */
export async function declareAndStore(
  paths: StatePaths,
  store: ConnectorStore,
  current: InstalledRelease,
  keys: readonly GivenKey[],
  env: NodeJS.ProcessEnv,
): Promise<InstallResult> {
  const { key } = current.release.manifest
  const text = await fs.readFile(path.join(current.release.root, MANIFEST_FILE), 'utf8')
  const manifest = declareGivenKeys(JSON.parse(text) as Record<string, unknown>, keys, key)
  const madeTmp = !(await fs.stat(paths.tmpDir).then(
    () => true,
    () => false,
  ))
  await ensurePrivateDir(paths.tmpDir)
  const staged = path.join(paths.tmpDir, `stage-${key}-${randomBytes(4).toString('hex')}`)
  try {
    // an installed release is loaded without its file list (load.ts): walk it for the copy
    await copyEntries(current.release.root, staged, await walkRelease(current.release.root))
    // the copied manifest is read-only, like the whole stored release
    await fs.rm(path.join(staged, MANIFEST_FILE), { force: true })
    await fs.writeFile(path.join(staged, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o644 })
    const release = await loadRelease(staged)
    const values = splitGivenKeys(release.manifest, keys)
    const located = await locateCommand(release, env.PATH)
    const source = current.installed.source!
    const checked = { digest: current.installed.digest, same: true }
    return await storeAndRecord(paths, release, (stored) => {
      const command = recordedCommand(located, stored.dir)
      const runtime = { environment: recordEnvironment(env), ...(command ? { command } : {}) }
      return store.record(stored, runtime, { source, checked, keys: values })
    })
  } finally {
    // a staged copy under tmp/: a leftover is removed by the next install, and must not hide the outcome
    await removeTree(staged).catch(() => undefined)
    // rmdir refuses tmp/ while another install uses it: then it stays, as it should
    if (madeTmp) await fs.rmdir(paths.tmpDir).catch(() => undefined)
  }
}
