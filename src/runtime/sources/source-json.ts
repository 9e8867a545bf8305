import fs from 'node:fs/promises'
import { ErrorCodes, TuttiError } from '../errors.js'

/**
 * A JSON file of a package (package.json, plugin.json, .mcp.json,
 * server.json), named by `label` in every error. A missing file is
 * undefined when `optional`, else an error; bad JSON is always one.
 */
export async function readSourceJson(
  file: string,
  label: string,
  options: { optional?: boolean } = {},
): Promise<unknown> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT'
    if (missing && options.optional) return undefined
    throw new TuttiError(
      missing ? ErrorCodes.MANIFEST_NOT_FOUND : ErrorCodes.MANIFEST_INVALID,
      `${label}: ${missing ? 'no such file' : 'cannot be read'}`,
    )
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new TuttiError(ErrorCodes.MANIFEST_INVALID, `${label}: not valid JSON`)
  }
}
