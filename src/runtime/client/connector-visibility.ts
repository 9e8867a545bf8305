import { assertConnectorKey } from '../connector-key.js'
import type { ConnectorState } from '../control-protocol/connector-state.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import { secretSettingNames } from '../manifest/schema.js'
import type { StatePaths } from '../paths.js'
import { resolveToolNames, toolNamesOf } from '../registry/tool-filter.js'
import type { InstalledRelease } from '../store/connector-store.js'
import type { StoredToolFilter, ToolFilterChange } from '../store/tool-filter-record.js'
import { expectOutcome, OUTCOME_WAIT_MS, type OutcomeWait } from './connector-outcome.js'
import { ensureDaemon } from './ensure-daemon.js'

/** `connect`'s tool flags, as given (comma lists split). */
export interface ToolFlags {
  tools?: string[]
  hideTools?: string[]
  allTools?: boolean
  alwaysLoad?: string[]
}

/** Which table the names were checked against (control-protocol/tool-table.ts); `none`: they could not be. */
export type CheckedAgainst = 'served' | 'cache' | 'declared' | 'none'

export interface ToolFilterOutcome {
  changed: boolean
  toolFilter?: StoredToolFilter
  checkedAgainst: CheckedAgainst
}

const bad = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

/**
 * The tool flags as a change of the stored filter, every name checked
 * against the whole table the daemon knows of the connector (hidden tools
 * included) and stored as the upstream's name. With no table known yet (a
 * connector that never started: needs-auth, never listed), the names are
 * stored as given: `checkedAgainst` says `none`, and once a table is known,
 * status lists a name that matches no tool.
 */
export async function checkToolFlags(paths: StatePaths, current: InstalledRelease, flags: ToolFlags) {
  const { tools, hideTools, allTools, alwaysLoad } = flags
  const { key } = current.installed
  if (!current.release.manifest.mcp) throw bad(`connector "${key}" has no MCP server: it has no tools to filter`)
  if (tools && hideTools) throw bad('--tools and --hide-tools exclude each other: give one')
  if (allTools && (tools || hideTools))
    throw bad(`--all-tools serves every tool: it cannot go with ${tools ? '--tools' : '--hide-tools'}`)
  if (tools && !tools.length) throw bad('--tools needs at least one tool name (to serve none, disable the connector)')
  if (hideTools && !hideTools.length) throw bad('--hide-tools needs at least one tool name')
  const table = await (await ensureDaemon(paths)).toolTable(key)
  const known = table.source !== 'none'
  const names = toolNamesOf(key, table.tools)
  const resolve = (flag: string, given: string[]) => (known ? resolveToolNames(key, flag, given, names) : given)
  const change: ToolFilterChange = {}
  if (tools) change.tools = { allow: resolve('--tools', tools) }
  else if (hideTools) change.tools = { hide: resolve('--hide-tools', hideTools) }
  else if (allTools) change.tools = { all: true }
  if (alwaysLoad) change.alwaysLoad = resolve('--always-load', alwaysLoad)
  return { change, checkedAgainst: table.source }
}

/** A comma list from one or more flags: `--tools a,b --tools c`; '' is the empty list. */
export function nameList(values: readonly string[] | undefined): string[] | undefined {
  if (!values?.length) return undefined
  return [...new Set(values.flatMap((v) => v.split(',')).map((n) => n.trim()))].filter((n) => n !== '')
}

/**
 * `connector disable` and `enable`: the switch in installed.json, then a
 * reconcile that withdraws (or restores) the connector's tools, command and
 * Skills. Its release, credentials, settings, OAuth grant and data stay as
 * they are. Asking for what already holds changes nothing, and says so.
 */
export async function switchConnector(
  paths: StatePaths,
  key: string,
  disabled: boolean,
  wait: OutcomeWait = { wait: true, timeoutMs: OUTCOME_WAIT_MS },
): Promise<{ key: string; disabled: boolean; changed: boolean; state?: ConnectorState }> {
  assertConnectorKey(key)
  const { setDisabled } = await import('../store/connector-visibility.js')
  const { changed } = await setDisabled(paths, key, disabled)
  const daemon = await ensureDaemon(paths)
  const answer = await daemon.reconcile([key], wait.wait ? wait.timeoutMs : 0)
  const state = answer.connectors.find((c) => c.key === key)
  if (!disabled) expectOutcome(`enabled ${key}`, state, wait)
  return { key, disabled, changed, ...(state ? { state } : {}) }
}

/** The names of what is stored for a connector, as `connect` reports them: credentials apart from settings. */
export function storedNames(current: InstalledRelease): { variables: string[]; settings: string[] } {
  const secret = new Set(secretSettingNames(current.release.manifest))
  const credentials = Object.keys(current.credentials)
  const settings = [...Object.keys(current.installed.settings ?? {}), ...credentials.filter((n) => secret.has(n))]
  return { variables: credentials.filter((n) => !secret.has(n)).sort(), settings: settings.sort() }
}
