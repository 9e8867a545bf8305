import { z } from 'zod'
import { ErrorCodes, TuttiError } from '../errors.js'
import { readJsonIfExists, writeJsonAtomic } from '../fs/atomic-write.js'
import { assertLockHeld, withLock } from '../fs/lock.js'
import type { StatePaths } from '../paths.js'
import { installOriginSchema } from './install-origin.js'
import { sourceIdentitySchema } from './source-identity.js'
import { storedToolFilter } from './tool-filter-record.js'

/**
 * installed.json and credentials.json: small JSON documents, always written
 * atomically under the one state lock. credentials.json is 0600 (all state
 * files are), and its values never leave the process except into a
 * connector's own environment.
 */
const installedConnector = z.object({
  key: z.string(),
  name: z.string(),
  version: z.string(),
  digest: z.string().regex(/^[a-f0-9]{64}$/),
  installedAt: z.string(),
  /** The stdio command resolved to an absolute path when it was installed or connected (bare names only). */
  command: z.string().optional(),
  /** The upstream's base environment, recorded from the installing shell (PATH, HOME, locale, proxy/CA). */
  environment: z.record(z.string(), z.string()).optional(),
  /** Non-secret settings set with `connect --set` (declared in the manifest's `config`). */
  settings: z.record(z.string(), z.string()).optional(),
  /** The package it was installed from (source-identity.ts); absent in installs recorded before it was. */
  source: sourceIdentitySchema.optional(),
  /** How it was installed, so that `update` installs the newer version the same way (install-origin.ts). */
  origin: installOriginSchema.optional(),
  /** `connector disable`: installed, with everything kept, but none of its tools, command or Skills served. */
  disabled: z.literal(true).optional(),
  /** The user's tool filter (`connect --tools …`, tool-filter-record.ts). */
  toolFilter: storedToolFilter.optional(),
})
export type InstalledConnector = z.infer<typeof installedConnector>

const installedState = z.object({
  schemaVersion: z.literal(1),
  connectors: z.record(z.string(), installedConnector),
})
export type InstalledState = z.infer<typeof installedState>

const credentialsState = z.object({
  schemaVersion: z.literal(1),
  connectors: z.record(z.string(), z.record(z.string(), z.string())),
})
export type CredentialsState = z.infer<typeof credentialsState>

async function readDoc<T>(file: string, schema: z.ZodType<T>, empty: T): Promise<T> {
  let raw: unknown
  try {
    raw = await readJsonIfExists(file)
  } catch (err) {
    // JSON.parse quotes the text around the error, and this text may hold credentials: say where, not what
    const at = /position (\d+)/.exec((err as Error).message)?.[1]
    throw new TuttiError(
      ErrorCodes.STATE_CORRUPT,
      `${file} is not valid JSON${at ? ` (at byte ${at})` : ''}; fix or remove it`,
    )
  }
  if (raw === undefined) return keyedByConnector(empty)
  const parsed = schema.safeParse(raw)
  if (!parsed.success)
    throw new TuttiError(ErrorCodes.STATE_CORRUPT, `${file} does not match the expected format; fix or remove it`)
  return keyedByConnector(parsed.data)
}

/** Keyed maps without a prototype: `connectors["constructor"]` is a connector or nothing, never Object's. */
function keyedByConnector<T>(doc: T): T {
  const d = doc as { connectors: Record<string, unknown> }
  const connectors = Object.create(null) as Record<string, unknown>
  for (const [key, value] of Object.entries(d.connectors)) {
    connectors[key] = Object.assign(Object.create(null), value)
  }
  return { ...doc, connectors }
}

export const readInstalled = (paths: StatePaths): Promise<InstalledState> =>
  readDoc(paths.installedJson, installedState, { schemaVersion: 1, connectors: {} })

export const readCredentials = (paths: StatePaths): Promise<CredentialsState> =>
  readDoc(paths.credentialsJson, credentialsState, { schemaVersion: 1, connectors: {} })

/**
 * Read-modify-write of the state documents under the state lock. `fn`
 * mutates drafts; only documents it reports as changed are written.
 */
export async function updateState<T>(
  paths: StatePaths,
  fn: (
    draft: { installed: InstalledState; credentials: CredentialsState },
    /** The lock's signal, for the other documents `fn` writes under it (oauth-grants.json). */
    held: AbortSignal,
  ) => Promise<{ result: T; installedChanged?: boolean; credentialsChanged?: boolean }>,
): Promise<T> {
  return withLock(paths.stateLockTarget, async (held) => {
    const draft = { installed: await readInstalled(paths), credentials: await readCredentials(paths) }
    const out = await fn(draft, held)
    assertLockHeld(held, paths.stateLockTarget)
    // credentials first: the daemon reads both without the lock, and must never see a connector just installed
    // under a taken key (--replace) beside the credentials of the one it replaced
    if (out.credentialsChanged) await writeJsonAtomic(paths.credentialsJson, draft.credentials)
    if (out.installedChanged) await writeJsonAtomic(paths.installedJson, draft.installed)
    return out.result
  })
}
