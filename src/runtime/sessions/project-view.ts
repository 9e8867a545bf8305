import fs from 'node:fs'
import path from 'node:path'
import { CONNECTOR_KEY } from '../connector-key.js'
import { ErrorCodes, TuttiError } from '../errors.js'
import { viewLayerSchema, type ViewLayer } from './session-view.js'

/** In a workspace directory: the view every session prepared for that workspace starts from. */
export const PROJECT_VIEW_FILE = path.join('.tutti', 'connectors.json')

/** A project file is small: this much and no more is read. */
const MAX_PROJECT_FILE_BYTES = 256 * 1024

const projectSchema = viewLayerSchema.omit({ from: true })

const bad = (file: string, why: string) =>
  new TuttiError(ErrorCodes.ARGUMENT_INVALID, `project file ${file}: ${why}; fix it or remove it`)

/**
 * The layer a workspace's `.tutti/connectors.json` adds to each of its
 * sessions' views: `{ "connectors": [...], "hide": [...], "tools": { "<key>":
 * { "allow": [...] } | { "hide": [...] } } }`, every field optional. A
 * workspace that is not a directory, or has no such file, adds none. A file
 * that is there but not right is bad input: the session is not prepared
 * (narrowing silently less than the project asked for would show it more).
 */
export function projectLayer(workspace: string): ViewLayer | undefined {
  if (!path.isAbsolute(workspace)) return undefined
  const file = path.join(workspace, PROJECT_VIEW_FILE)
  let text: string
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) throw bad(file, 'not a regular file')
    if (stat.size > MAX_PROJECT_FILE_BYTES) throw bad(file, `larger than ${MAX_PROJECT_FILE_BYTES} bytes`)
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    // no file (or no workspace directory): the workspace asks for nothing
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    if (err instanceof TuttiError) throw err
    throw bad(file, `cannot be read (${(err as Error).message})`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw bad(file, `not valid JSON (${(err as Error).message})`)
  }
  const parsed = projectSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw bad(file, `${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return { from: `project file ${file}`, ...parsed.data }
}

/** `--connectors` / `--hide-connectors` / `--as` as a layer; none when none is given. */
export function flagsLayer(
  connectors?: readonly string[],
  hide?: readonly string[],
  as?: string,
): ViewLayer | undefined {
  if (!connectors && !hide && as === undefined) return undefined
  for (const [flag, keys] of [
    ['--connectors', connectors],
    ['--hide-connectors', hide],
    ['--as', as === undefined ? undefined : [as]],
  ] as const) {
    for (const key of keys ?? [])
      if (!CONNECTOR_KEY.test(key))
        throw new TuttiError(ErrorCodes.ARGUMENT_INVALID, `${flag}: "${key.slice(0, 64)}" is not a connector key`)
  }
  const given = [connectors && '--connectors', hide && '--hide-connectors', as !== undefined && '--as']
  return {
    from: given.filter(Boolean).join('/'),
    ...(as !== undefined ? { as } : {}),
    ...(connectors ? { connectors: [...new Set(connectors)] } : {}),
    ...(hide ? { hide: [...new Set(hide)] } : {}),
  }
}
