import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { ErrorCodes, TuttiError } from '../errors.js'
import { chooseServer, type GeneratedSource, type SourceOptions } from './generated-source.js'
import { pluginMcpFileSchema, pluginServerSchema, PluginServerMapper } from './plugin-mcp-config.js'
import { sourceIdentity } from '../store/source-identity.js'
import { readSourceJson } from './source-json.js'
import { deriveKey } from './source-key.js'

/**
 * Claude Code (`.claude-plugin/plugin.json`), Codex (`.codex-plugin/plugin.json`)
 * and Agent Plugins 1.0 (root `plugin.json`) packages as connectors: MCP from
 * the plugin's server config, Skills from `skills/`, the CLI from the single
 * executable in `bin/`. What tutti does not carry is listed, not dropped.
 */
export const PLUGIN_KINDS = [
  { kind: 'Claude Code plugin', manifest: '.claude-plugin/plugin.json', mcpFile: '.mcp.json' },
  { kind: 'Codex plugin', manifest: '.codex-plugin/plugin.json', mcpFile: '.mcp.json' },
  { kind: 'Agent Plugins package', manifest: 'plugin.json', mcpFile: 'mcp.json' },
] as const

const pluginJson = z.looseObject({
  name: z.string().min(1, 'must not be empty'),
  version: z.string().optional(),
  description: z.string().optional(),
  mcpServers: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  skills: z.union([z.string(), z.array(z.string())]).optional(),
})

/** Parts of a plugin tutti has no place for: the manifest field and the default location that declare them. */
const UNCARRIED: Array<{ what: string; field: string; file: string }> = [
  { what: 'slash commands', field: 'commands', file: 'commands' },
  { what: 'subagents', field: 'agents', file: 'agents' },
  { what: 'hooks', field: 'hooks', file: 'hooks/hooks.json' },
  { what: 'LSP servers', field: 'lspServers', file: '.lsp.json' },
  { what: 'output styles', field: 'outputStyles', file: 'output-styles' },
  { what: 'apps', field: 'apps', file: '.app.json' },
]

const exists = (p: string) =>
  fs.stat(p).then(
    (s) => s,
    () => undefined,
  )

function invalid(file: string, message: string): TuttiError {
  return new TuttiError(ErrorCodes.MANIFEST_INVALID, `${file}: ${message}`)
}

const readJson = (root: string, rel: string): Promise<unknown> => readSourceJson(path.join(root, rel), rel)

function parse<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  throw invalid(file, `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
}

/** Which plugin format a directory is, if any. */
export async function detectPlugin(root: string): Promise<(typeof PLUGIN_KINDS)[number] | undefined> {
  for (const kind of PLUGIN_KINDS) if ((await exists(path.join(root, kind.manifest)))?.isFile()) return kind
  return undefined
}

/**
 * A relative path from a plugin manifest ("./skills/") as a release path ("skills"), or undefined if it leaves the
 * plugin.
 */
function releasePath(p: string): string | undefined {
  const normal = path.posix.normalize(p.replace(/\\/g, '/')).replace(/\/$/, '')
  return normal.startsWith('..') || path.posix.isAbsolute(normal) ? undefined : normal
}

async function servers(
  root: string,
  kind: (typeof PLUGIN_KINDS)[number],
  declared: string | Record<string, unknown> | undefined,
): Promise<{ file: string; servers: Record<string, unknown> } | undefined> {
  if (declared && typeof declared === 'object') return { file: kind.manifest, servers: declared }
  const file = typeof declared === 'string' ? releasePath(declared) : kind.mcpFile
  if (!file) throw invalid(kind.manifest, `mcpServers: "${declared}" is outside the plugin`)
  if (!(await exists(path.join(root, file)))) {
    if (typeof declared === 'string') throw invalid(kind.manifest, `mcpServers: ${file} does not exist`)
    return undefined
  }
  const data = await readJson(root, file)
  // a bare map of servers is accepted too (some plugins omit the "mcpServers" wrapper)
  const wrapped = data && typeof data === 'object' && 'mcpServers' in data ? data : { mcpServers: data }
  return { file, servers: parse(pluginMcpFileSchema, wrapped, file).mcpServers }
}

async function singleExecutable(root: string, skipped: string[]): Promise<string | undefined> {
  const dir = path.join(root, 'bin')
  // no bin/ dir: no executable
  const names = await fs.readdir(dir).catch(() => [] as string[])
  const executables: string[] = []
  for (const name of names.sort()) {
    const st = await fs.stat(path.join(dir, name))
    if (st.isFile() && st.mode & 0o111) executables.push(name)
  }
  if (executables.length > 1)
    skipped.push(
      `bin/ holds ${executables.length} executables (${executables.join(', ')}); ` +
        `a connector has one CLI, so none is published`,
    )
  return executables.length === 1 ? `bin/${executables[0]}` : undefined
}

export async function pluginSource(
  root: string,
  kind: (typeof PLUGIN_KINDS)[number],
  options: SourceOptions,
): Promise<GeneratedSource> {
  const plugin = parse(pluginJson, await readJson(root, kind.manifest), kind.manifest)
  const skipped: string[] = []
  const notes: string[] = []
  for (const part of UNCARRIED) {
    const where =
      part.field in plugin
        ? `"${part.field}" in ${kind.manifest}`
        : (await exists(path.join(root, part.file)))
          ? part.file
          : undefined
    if (where) skipped.push(`${part.what} (${where}): tutti does not carry them`)
  }
  const manifest: Record<string, unknown> = {
    schemaVersion: 1,
    key: deriveKey(plugin.name, options.key),
    name: plugin.name.slice(0, 80),
    version: plugin.version ?? '0.0.0',
    description: (plugin.description ?? '').slice(0, 1024),
  }
  const config = await servers(root, kind, plugin.mcpServers)
  if (config && Object.keys(config.servers).length) {
    const [name, raw] = chooseServer(
      `${config.file}`,
      new Map(Object.entries(config.servers)),
      options.server,
      (m) => new TuttiError(ErrorCodes.ARGUMENT_INVALID, m),
    )
    const server = parse(pluginServerSchema, raw, `${config.file}: mcpServers.${name}`)
    if ('url' in server && server.type === 'sse')
      throw invalid(
        config.file,
        `mcpServers.${name}: the SSE transport is not supported; tutti reaches remote servers over Streamable HTTP`,
      )
    const mapped = new PluginServerMapper().toTutti(server, options.args ?? [])
    manifest.mcp = mapped.mcp
    if (mapped.auth) manifest.auth = mapped.auth
    else if (mapped.variables.length) manifest.auth = { kind: 'env', variables: mapped.variables }
    if (mapped.config.length) manifest.config = mapped.config
    skipped.push(...mapped.skipped.map((s) => `mcpServers.${name}.${s}`))
    notes.push(...mapped.notes)
  } else if (options.server !== undefined)
    throw new TuttiError(
      ErrorCodes.ARGUMENT_INVALID,
      `--server ${options.server}: this ${kind.kind} has no MCP servers`,
    )
  const skillsDir = typeof plugin.skills === 'string' ? releasePath(plugin.skills) : 'skills'
  if (Array.isArray(plugin.skills)) skipped.push('a list of Skill directories (tutti reads one: skills/)')
  if (skillsDir && (await exists(path.join(root, skillsDir)))?.isDirectory()) manifest.skills = skillsDir
  const cli = await singleExecutable(root, skipped)
  if (cli) manifest.cli = { entrypoint: cli }
  return { root, manifest, kind: kind.kind, source: sourceIdentity(kind.kind, plugin.name), skipped, notes }
}
