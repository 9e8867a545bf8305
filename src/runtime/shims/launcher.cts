import fs = require('node:fs')
import Module = require('node:module')

/**
 * Runs inside the shim's process and becomes the connector's CLI: it checks
 * that the pinned release is still the installed, authorized one, sets the
 * connector's environment, then runs the entrypoint as this process's main
 * module. No wrapper process stays between the agent and the CLI, so argv,
 * stdio, signals and the exit code are the CLI's own.
 *
 * It runs before every connector CLI, so it costs as little as it can: a
 * CommonJS script (an ES module would start node's module loader, which a
 * CommonJS entrypoint run directly never pays for) that loads nothing but
 * node:fs and node:module. Every path and name it needs comes in the launch
 * target (shim-target.ts), computed by the daemon from paths.ts and names.ts.
 */
export interface LaunchConfig {
  key: string
  generation: number
  digest: string
  /** Absolute path of the entrypoint inside the release. */
  entrypoint: string
  /** `tutti-connector-<key>`: how its refusals are signed. */
  command: string
  installedJson: string
  credentialsJson: string
  /** The pinned release's manifest file. */
  manifest: string
  dataDir: string
  /** The variable the data dir is given in, and the session token's, which the connector never gets. */
  dataDirVar: string
  tokenVar: string
}

function refuse(config: LaunchConfig, message: string): never {
  process.stderr.write(`${config.command}: ${message}\n`)
  process.exit(126)
}

// biome-ignore lint/suspicious/noExplicitAny: the launcher reads its own files and checks each field it uses
function readJson(file: string): any {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

export function launch(config: LaunchConfig): void {
  const { key, digest, dataDir } = config
  const connectors = readJson(config.installedJson)?.connectors
  // own properties only: a key never names something of Object's prototype
  const installed = connectors && Object.hasOwn(connectors, key) ? connectors[key] : undefined
  if (!installed)
    refuse(
      config,
      `the connector "${key}" is not installed; this command is left over and will not run the old release`,
    )
  if (installed.digest !== digest)
    refuse(
      config,
      `the connector "${key}" was upgraded or replaced; ` +
        `this command is stale and will not run the old release (run it again)`,
    )
  const manifest = readJson(config.manifest)
  const variables: Array<{ name: string; required?: boolean }> =
    manifest?.auth?.kind === 'env' ? manifest.auth.variables : []
  const storedCredentials = readJson(config.credentialsJson)?.connectors
  const credentials: Record<string, string> =
    storedCredentials && Object.hasOwn(storedCredentials, key) ? storedCredentials[key] : {}
  const has = (name: string) => Object.hasOwn(credentials, name) && !!credentials[name]
  // an optional variable ("required": false) never keeps the CLI from running
  const missing = variables.filter((v) => v.required !== false && !has(v.name)).map((v) => v.name)
  if (missing.length)
    refuse(
      config,
      `the connector "${key}" is not connected (missing ${missing.join(', ')}); it will not run until it is`,
    )
  // the session token is the agent's connection capability, not the connector's
  delete process.env[config.tokenVar]
  // settings as the MCP server gets them: the stored value, else the default (only ${TUTTI_CONNECTOR_DATA} expands in
  // it)
  const stored: Record<string, string> = installed.settings ?? {}
  for (const setting of (manifest?.config ?? []) as Array<{ name: string; default?: string }>) {
    const value = stored[setting.name] ?? setting.default?.split(`\${${config.dataDirVar}}`).join(dataDir)
    if (value !== undefined) process.env[setting.name] = value
  }
  for (const { name } of variables) if (has(name)) process.env[name] = credentials[name]
  process.env[config.dataDirVar] = dataDir
  process.argv = [process.argv[0]!, config.entrypoint, ...process.argv.slice(2)]
  ;(Module as unknown as { runMain(main?: string): void }).runMain(config.entrypoint)
}
