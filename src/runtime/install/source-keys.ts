import { checkGivenKeys, declareGivenKeys, type GivenKey } from '../manifest/given-keys.js'
import type { ConnectorManifest } from '../manifest/schema.js'
import type { StatePaths } from '../paths.js'
import type { PreparedSource } from '../sources/install-source.js'
import type { ConnectorStore } from '../store/connector-store.js'
import { sameSource } from '../store/source-identity.js'
import { installedSource } from './installed-source.js'

/**
 * The user's keys and the source's own (header values), checked together;
 * a generated manifest declares the ones it lacks. `previous` is the
 * manifest the same source generated before: what the user declared on it
 * (`install --env`, `connect --env`) stays declared on the new version, so
 * an update keeps those settings and credentials.
 */
export function declareKeys(
  prepared: PreparedSource,
  given: readonly GivenKey[] = [],
  previous?: ConnectorManifest,
): GivenKey[] {
  const generated = prepared.generated
  const keys = [...given, ...(generated?.keys ?? [])]
  checkGivenKeys(keys)
  if (!generated) return keys
  const key = String(generated.manifest.key)
  // an OAuth connector takes no other credential: only settings carry over to it
  const oauth = (generated.manifest.auth as { kind?: string } | undefined)?.kind === 'oauth'
  const kept = previous ? keptDeclarations(previous, keys).filter((k) => !oauth || !k.secret) : []
  if (kept.length) generated.manifest = declareGivenKeys(generated.manifest, kept, key)
  if (keys.length) generated.manifest = declareGivenKeys(generated.manifest, keys, key)
  return keys
}

/** The previous manifest's variables and settings as keys to declare (the values are stored, not given). */
function keptDeclarations(previous: ConnectorManifest, given: readonly GivenKey[]): GivenKey[] {
  const named = new Set(given.map((k) => k.name))
  const out: GivenKey[] = []
  const keep = (name: string, secret: boolean) => {
    if (!named.has(name)) out.push({ name, value: '(kept)', secret, flag: 'the installed version' })
  }
  if (previous.auth.kind === 'env') for (const v of previous.auth.variables) keep(v.name, true)
  for (const c of previous.config ?? []) keep(c.name, !!c.secret)
  return out
}

/** The manifest installed under a generated source's key when it came from the same source, else undefined. */
export async function previousManifest(
  store: ConnectorStore,
  paths: StatePaths,
  prepared: PreparedSource,
): Promise<ConnectorManifest | undefined> {
  const generated = prepared.generated
  if (!generated) return undefined
  const key = String(generated.manifest.key)
  const taken = await installedSource(store, paths, key)
  if (!taken || !sameSource(taken.source, generated.source, String(generated.manifest.name))) return undefined
  // a stored release that cannot be read offers no previous manifest: the install starts afresh
  return (await store.get(key).catch(() => undefined))?.release.manifest
}
