import { importConfigs, isConfigFile, type ImportReport } from '../runtime/client/config-imports.js'
import { ErrorCodes, TuttiError } from '../runtime/errors.js'
import type { StatePaths } from '../runtime/paths.js'
import { importReportText } from './config-import-report.js'
import { outcomeWait } from './outcome-flags.js'

/** The `install` flags an import reads. */
export interface ImportFlags {
  from?: string
  'json-entry'?: string
  project?: string
  only?: string
  key?: string
  server?: string
  'dry-run': boolean
  replace: boolean
  purge: boolean
  wait: boolean
  timeout: number
}

const bad = (message: string) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, message)

/** Whether `install` imports a config: `--from`, `--json-entry`, or a config file as the source. */
export async function importsConfig(source: string | undefined, flags: ImportFlags): Promise<boolean> {
  if (flags.from !== undefined && flags['json-entry'] !== undefined)
    throw bad('--from and --json-entry: give one of them')
  if (flags.from !== undefined || flags['json-entry'] !== undefined) {
    if (source !== undefined)
      throw bad(`unexpected argument "${source}": --from and --json-entry read the servers themselves`)
    return true
  }
  if (source !== undefined && (await isConfigFile(source))) return true
  if (flags.only !== undefined) throw bad('--only selects servers of --from CLIENT or of a config file (.mcp.json)')
  if (flags.project !== undefined) throw bad('--project is for --from CLIENT: the project whose configs are read')
  return false
}

export interface ImportingCommand {
  paths: StatePaths
  json: boolean
  log: (text: string) => void
}

/** `install --from …`: the report (human or --json); exit 1 unless every selected server was imported. */
export async function runConfigImport(
  command: ImportingCommand,
  source: string | undefined,
  flags: ImportFlags,
  extraArgs: number,
): Promise<ImportReport> {
  if (extraArgs > 0)
    throw bad('arguments after "--" are for a single package; an imported server keeps the arguments of its config')
  if (flags.server !== undefined)
    throw bad('--server chooses among the servers of a plugin or server.json; for a config use --only NAME')
  const only = flags.only
    ?.split(',')
    .map((n) => n.trim())
    .filter(Boolean)
  if (flags.only !== undefined && !only?.length) throw bad('--only: give the names of servers, separated by commas')
  const report = await importConfigs(command.paths, process.env, {
    ...outcomeWait(flags),
    ...(flags.from !== undefined ? { from: flags.from } : { document: flags['json-entry'] ?? source! }),
    ...(flags.project !== undefined ? { project: flags.project } : {}),
    ...(only ? { only } : {}),
    ...(flags.key !== undefined ? { key: flags.key } : {}),
    dryRun: flags['dry-run'],
    replace: flags.replace,
    purge: flags.purge,
  })
  if (!command.json) command.log(importReportText(report).trimEnd())
  if (!report.ok) process.exitCode = 1
  return report
}
