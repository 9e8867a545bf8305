import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import type { ConfigImportOptions, ImportedEntry } from '../install/config-import.js'
import type { StatePaths } from '../paths.js'
import type { ConnectorState } from '../control-protocol/connector-state.js'
import type { ClientConfig, ConfigPlaces } from '../sources/client-configs/clients.js'
import type { OutcomeWait } from './connector-outcome.js'
import { ensureDaemon } from './ensure-daemon.js'

/**
 * `install --from <client>`, `--json-entry FILE|-` and `install <config
 * file>`: read the config, install each server (install/config-import.ts),
 * then have the daemon reconcile them all at once and wait for each one's
 * outcome. The report says what became of every entry.
 */
export interface ImportRequest extends OutcomeWait, Omit<ConfigImportOptions, 'env'> {
  /** `--from`: a client name. */
  from?: string
  /** A config document: `--json-entry FILE|-`, or a config file given as the source. */
  document?: string
  /** `--project DIR`: the project whose configs are read (default: the working directory). */
  project?: string
}

export interface ImportReport {
  dryRun: boolean
  kind: string
  files: string[]
  entries: Array<ImportedEntry & { state?: ConnectorState }>
  /** Whether every selected server was imported (and, when waited for, is not failed). */
  ok: boolean
}

/** The most a config document may be: a client config is a few kilobytes. */
const DOCUMENT_MAX_BYTES = 4 * 1024 * 1024

async function readDocument(source: string): Promise<string> {
  if (source !== '-')
    return fs.readFile(source, 'utf8').catch(() => {
      throw new TuttiError(ErrorCodes.MANIFEST_NOT_FOUND, `${source}: no such file`)
    })
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length
    if (size > DOCUMENT_MAX_BYTES)
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `--json-entry -: more than ${DOCUMENT_MAX_BYTES} bytes on stdin`,
      )
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Whether a `.json` source is an MCP client config (`.mcp.json`, a map of servers) rather than a server.json. */
export async function isConfigFile(source: string): Promise<boolean> {
  if (!source.endsWith('.json')) return false
  // unreadable: not taken for a config; the install that follows says why it cannot be read
  const text = await fs.readFile(source, 'utf8').catch(() => undefined)
  if (text === undefined) return false
  const { isConfigDocument } = await import('../sources/client-configs/clients.js')
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    // not JSON: not a config document; the server.json reader reports the parse error
    data = undefined
  }
  return isConfigDocument(source, data)
}

async function readConfig(request: ImportRequest, places: ConfigPlaces): Promise<ClientConfig> {
  const clients = await import('../sources/client-configs/clients.js')
  if (request.from !== undefined) return clients.readClientConfig(request.from, places)
  const source = request.document!
  const label = source === '-' ? 'stdin' : source
  let data: unknown
  try {
    data = JSON.parse(await readDocument(source))
  } catch (err) {
    if (err instanceof TuttiError) throw err
    throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${label}: not valid JSON`)
  }
  const baseDir = source === '-' ? places.project : path.dirname(path.resolve(source))
  return clients.configDocument(data, label, places, {
    baseDir,
    ...(request.key !== undefined ? { entryName: request.key } : {}),
  })
}

export async function importConfigs(
  paths: StatePaths,
  env: NodeJS.ProcessEnv,
  request: ImportRequest,
): Promise<ImportReport> {
  const places: ConfigPlaces = {
    home: env.HOME || os.homedir(),
    project: path.resolve(request.project ?? process.cwd()),
    env,
    platform: process.platform,
  }
  if (
    request.project !== undefined &&
    !(await fs.stat(places.project).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `--project ${request.project}: not a directory`)
  }
  const config = await readConfig(request, places)
  const { shown } = await import('../sources/client-configs/clients.js')
  const files = request.from !== undefined ? config.files.map((f) => shown(places, f)) : config.files
  if (!config.entries.length && !config.passed.length)
    throw new TuttiError(ErrorCodes.MANIFEST_NOT_FOUND, `no MCP servers in ${files.join(', ')}`)
  const { ConnectorStore } = await import('../store/connector-store.js')
  const { ConnectorInstaller } = await import('../install/connector-installer.js')
  const { ConfigImport } = await import('../install/config-import.js')
  const store = new ConnectorStore(paths)
  const { wait, timeoutMs, from: _from, document: _document, project: _project, ...options } = request
  const entries: ImportReport['entries'] = await new ConfigImport(
    paths,
    store,
    new ConnectorInstaller(paths, store),
  ).run(config, { ...options, env })
  const keys = entries
    .filter((e) => e.key && e.outcome !== 'failed' && e.outcome !== 'not imported' && !request.dryRun)
    .map((e) => e.key!)
  if (keys.length) {
    const states = (await (await ensureDaemon(paths)).reconcile(keys, wait ? timeoutMs : 0)).connectors
    for (const e of entries) {
      const state = states.find((s) => s.key === e.key)
      if (state && e.outcome !== 'failed') e.state = state
    }
  }
  const failedToStart = (e: (typeof entries)[number]) =>
    wait && (e.state?.status === 'failed' || e.state?.status === 'starting')
  return {
    dryRun: request.dryRun,
    kind: config.kind,
    files,
    entries,
    ok: entries.every((e) => e.outcome !== 'failed' && !failedToStart(e)),
  }
}
