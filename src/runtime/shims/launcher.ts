import { readFileSync } from 'node:fs'
import Module from 'node:module'
import path from 'node:path'
import { DATA_DIR_VAR, MANIFEST_FILE, shimCommand, TOKEN_ENV } from '../names.js'
import { statePaths } from '../paths.js'

/**
 * Runs inside the shim's process and becomes the connector's CLI: it checks
 * that the pinned release is still the installed, authorized one, sets the
 * connector's environment, then runs the entrypoint as this process's main
 * module. No wrapper process stays between the agent and the CLI, so argv,
 * stdio, signals and the exit code are the CLI's own.
 *
 * Kept free of heavy imports: it runs on every CLI invocation.
 */
export interface LaunchConfig {
  stateDir: string
  key: string
  generation: number
  digest: string
  entrypoint: string
}

function refuse(key: string, message: string): never {
  process.stderr.write(`${shimCommand(key)}: ${message}\n`)
  process.exit(126)
}

function readJson(file: string): any {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

export async function launch(config: LaunchConfig): Promise<void> {
  const { stateDir, key, digest } = config
  const paths = statePaths(stateDir)
  const connectors = readJson(paths.installedJson)?.connectors
  // own properties only: a key never names something of Object's prototype
  const installed = connectors && Object.hasOwn(connectors, key) ? connectors[key] : undefined
  if (!installed) refuse(key, `the connector "${key}" is not installed; this command is left over and will not run the old release`)
  if (installed.digest !== digest) refuse(key, `the connector "${key}" was upgraded or replaced; this command is stale and will not run the old release (run it again)`)
  const manifest = readJson(path.join(paths.releaseDir(key, digest), MANIFEST_FILE))
  const variables: Array<{ name: string; required?: boolean }> = manifest?.auth?.kind === 'env' ? manifest.auth.variables : []
  const declared = variables.map((v) => v.name)
  const storedCredentials = readJson(paths.credentialsJson)?.connectors
  const credentials: Record<string, string> = storedCredentials && Object.hasOwn(storedCredentials, key) ? storedCredentials[key] : {}
  const has = (name: string) => Object.hasOwn(credentials, name) && !!credentials[name]
  // an optional variable ("required": false) never keeps the CLI from running
  const missing = variables.filter((v) => v.required !== false && !has(v.name)).map((v) => v.name)
  if (missing.length) refuse(key, `the connector "${key}" is not connected (missing ${missing.join(', ')}); it will not run until it is`)
  // the session token is the agent's connection capability, not the connector's
  delete process.env[TOKEN_ENV]
  const dataDir = paths.dataDir(key)
  // settings as the MCP server gets them: the stored value, else the default (only ${TUTTI_CONNECTOR_DATA} expands in it)
  const stored: Record<string, string> = installed.settings ?? {}
  for (const setting of (manifest?.config ?? []) as Array<{ name: string; default?: string }>) {
    const value = stored[setting.name] ?? setting.default?.split(`\${${DATA_DIR_VAR}}`).join(dataDir)
    if (value !== undefined) process.env[setting.name] = value
  }
  for (const name of declared) if (has(name)) process.env[name] = credentials[name]
  process.env[DATA_DIR_VAR] = dataDir
  process.argv = [process.argv[0]!, config.entrypoint, ...process.argv.slice(2)]
  ;(Module as unknown as { runMain(main?: string): void }).runMain(config.entrypoint)
}
