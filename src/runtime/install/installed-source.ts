import fs from 'node:fs/promises'
import path from 'node:path'
import { MANIFEST_FILE } from '../names.js'
import type { StatePaths } from '../paths.js'
import { detectPlugin } from '../sources/plugin-source.js'
import type { ConnectorStore } from '../store/connector-store.js'
import { RELEASE_KIND, type InstalledSource } from '../store/source-identity.js'

/** The kinds a release without a plugin manifest can have come from: their releases look alike. */
const NON_PLUGIN_KINDS = ['npm package', 'server.json', RELEASE_KIND]

/**
 * The source of the connector installed under `key`, and its digest. One
 * installed before sources were recorded is derived from its release: its
 * manifest name (the package's own, also in a generated manifest) and,
 * where the files say, its kind (a plugin leaves its plugin manifest).
 */
export async function installedSource(
  store: ConnectorStore,
  paths: StatePaths,
  key: string,
): Promise<{ digest: string; source: InstalledSource } | undefined> {
  const entry = await store.entry(key)
  if (!entry) return undefined
  if (entry.source) return { digest: entry.digest, source: { recorded: entry.source } }
  const root = paths.releaseDir(key, entry.digest)
  const readable = await fs.stat(path.join(root, MANIFEST_FILE)).then(
    (s) => s.isFile(),
    () => false,
  )
  // an unreadable release (the fix it is told is a reinstall) has only its recorded name to go by
  if (!readable) return { digest: entry.digest, source: { derived: { manifestName: entry.name } } }
  const plugin = await detectPlugin(root)
  const kinds = plugin ? [plugin.kind, RELEASE_KIND] : NON_PLUGIN_KINDS
  return { digest: entry.digest, source: { derived: { manifestName: entry.name, kinds } } }
}
