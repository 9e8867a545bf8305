import { assertConnectorKey } from '../connector-key.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { StatePaths } from '../paths.js'
import { notInstalled } from './not-installed.js'
import { readInstalled, updateState, type InstalledConnector } from './state-files.js'
import { changedFilter, sameFilter, type StoredToolFilter, type ToolFilterChange } from './tool-filter-record.js'

/**
 * What a user decides about a connector's visibility, kept in its
 * installed.json entry: whether it is disabled, and its tool filter. Nothing
 * else of the entry (release, settings, runtime) and nothing of the
 * credentials, grants or data is touched; a change that changes nothing
 * writes nothing.
 */
/** `disable` (true) or `enable` (false); `changed` false when it already was. */
export async function setDisabled(
  paths: StatePaths,
  key: string,
  disabled: boolean,
): Promise<{ key: string; changed: boolean }> {
  assertConnectorKey(key)
  // refused before the lock is taken: an unknown key writes nothing, not even a lock
  const present = (await readInstalled(paths)).connectors
  if (!present[key]) throw notInstalled(key, Object.keys(present))
  return updateState<{ key: string; changed: boolean }>(paths, async ({ installed }) => {
    const entry = installed.connectors[key]
    if (!entry) throw notInstalled(key, Object.keys(installed.connectors))
    if (!!entry.disabled === disabled) return { result: { key, changed: false } }
    if (disabled) entry.disabled = true
    else delete entry.disabled
    return { result: { key, changed: true }, installedChanged: true }
  })
}

type FilterResult = { key: string; changed: boolean; toolFilter?: StoredToolFilter }

/**
 * The user's filter with `change` applied, for the release `digest` the
 * names were checked against (another install meanwhile: checked again).
 */
export async function setToolFilter(
  paths: StatePaths,
  key: string,
  digest: string,
  change: ToolFilterChange,
): Promise<FilterResult> {
  assertConnectorKey(key)
  return updateState<FilterResult>(paths, async ({ installed }) => {
    const entry = installed.connectors[key]
    if (!entry) throw notInstalled(key, Object.keys(installed.connectors))
    if (entry.digest !== digest)
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `connector "${key}" was reinstalled while its tool names were checked; run the command again`,
      )
    const next = changedFilter(entry.toolFilter, change)
    const shown = next ? { toolFilter: next } : {}
    if (sameFilter(entry.toolFilter, next)) return { result: { key, changed: false, ...shown } }
    if (next) entry.toolFilter = next
    else delete entry.toolFilter
    return { result: { key, changed: true, ...shown }, installedChanged: true }
  })
}

/** A new release of the same package (update, reinstall) keeps what the user decided; a replaced package does not. */
export function carryVisibility(previous: InstalledConnector | undefined, entry: InstalledConnector): void {
  if (previous?.disabled) entry.disabled = true
  if (previous?.toolFilter) entry.toolFilter = previous.toolFilter
}
