import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir, writeJsonAtomic } from '../fs/atomic-write.js'
import { OAuthGrantStore, type OAuthGrant } from '../oauth/grant-store.js'
import type { StatePaths } from '../paths.js'
import { removeTree } from './release-store.js'
import { describeSource, type SourceIdentity } from './source-identity.js'
import type { InstalledConnector } from './state-files.js'

/** What `install --replace` did with the connector it replaced (names only: never a value). */
export interface ReplacedConnector {
  /** Its recorded source; absent for an install recorded before sources were. */
  source?: SourceIdentity
  name: string
  version: string
  credentials: string[]
  settings: string[]
  oauthGrant: boolean
  data: boolean
  /** Where all of it was set aside; absent with --purge (then it was deleted). */
  keptIn?: string
}

/** The line `install` prints for it: what was not carried over, and where it went. */
export function replacedNotice(key: string, r: ReplacedConnector): string {
  const what = `${r.source ? describeSource(r.source) : JSON.stringify(r.name)} ${r.version}`
  const parts = [
    r.credentials.length ? `credentials (${r.credentials.join(', ')})` : '',
    r.settings.length ? `settings (${r.settings.join(', ')})` : '',
    r.oauthGrant ? 'OAuth grant' : '',
    r.data ? 'data' : '',
  ].filter(Boolean)
  const where = r.keptIn ? `are kept in ${r.keptIn}` : 'were deleted (--purge)'
  const left = parts.length ? `its ${parts.join(', ')} ${where}` : 'it had none to keep'
  return (
    `replaced ${what}: ${key} starts without its credentials, settings, OAuth grant and data ` +
    `(none were carried over); ${left}`
  )
}

/** The old connector's parts, as the caller (holding the state lock) read them. */
export interface Replaced {
  entry: InstalledConnector
  credentials: Readonly<Record<string, string>> | undefined
}

/** A name for the set-aside directory: when, and which package (readable, never a path part of its own). */
function asideName(entry: InstalledConnector, now: Date): string {
  const { kind, name } = entry.source ?? { kind: 'package', name: entry.name }
  const slug = `${kind}-${name}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
  return `${now.toISOString().replace(/[-:.]/g, '')}-${slug || 'package'}`
}

const exists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  )

/**
 * Take everything the user gave a connector out of the live stores before
 * another package is recorded under its key: its OAuth grant now, its data
 * directory now, its credentials and settings by the caller's write of
 * credentials.json and installed.json (credentials first). Without --purge
 * they are kept in connectors/<key>/replaced/<time>-<package>/, each file
 * in the format of its live store (0600): connector.json (the install
 * record and settings), credentials.json, oauth-grants.json and data/.
 * The set-aside directory is complete before anything leaves a live store,
 * so an interrupted replace loses nothing.
 */
export async function setAside(
  paths: StatePaths,
  held: AbortSignal,
  old: Replaced,
  by: SourceIdentity,
  purge: boolean,
): Promise<ReplacedConnector> {
  const { key } = old.entry
  const grants = new OAuthGrantStore(paths)
  const grant = await grants.get(key)
  const dataDir = paths.dataDir(key)
  const report: ReplacedConnector = {
    ...(old.entry.source ? { source: old.entry.source } : {}),
    name: old.entry.name,
    version: old.entry.version,
    credentials: Object.keys(old.credentials ?? {}).sort(),
    settings: Object.keys(old.entry.settings ?? {}).sort(),
    oauthGrant: !!grant,
    data: await exists(dataDir),
  }
  if (!purge) report.keptIn = await keep(paths, old, grant, by)
  await grants.updateHeld(held, key, () => undefined)
  if (report.data) {
    if (report.keptIn) await fs.rename(dataDir, path.join(report.keptIn, 'data'))
    else await removeTree(dataDir)
  }
  return report
}

async function keep(
  paths: StatePaths,
  old: Replaced,
  grant: OAuthGrant | undefined,
  by: SourceIdentity,
): Promise<string> {
  const { key, name, version, digest, installedAt, source, settings } = old.entry
  const now = new Date()
  const parent = paths.replacedDir(key)
  await ensurePrivateDir(parent)
  const tmp = path.join(parent, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
  const dir = path.join(parent, asideName(old.entry, now))
  try {
    await ensurePrivateDir(tmp)
    const record = {
      key,
      name,
      version,
      digest,
      installedAt,
      ...(source ? { source } : {}),
      ...(settings ? { settings } : {}),
    }
    await writeJsonAtomic(path.join(tmp, 'connector.json'), {
      ...record,
      replacedAt: now.toISOString(),
      replacedBy: by,
    })
    if (old.credentials)
      await writeJsonAtomic(path.join(tmp, 'credentials.json'), {
        schemaVersion: 1,
        connectors: { [key]: old.credentials },
      })
    if (grant)
      await writeJsonAtomic(path.join(tmp, 'oauth-grants.json'), { schemaVersion: 1, connectors: { [key]: grant } })
    await fs.rename(tmp, dir)
  } catch (err) {
    await removeTree(tmp)
    throw err
  }
  return dir
}
