import fs from 'node:fs/promises'
import path from 'node:path'
import { ErrorCodes, TuttiError } from '../errors.js'
import { readSkills, type SkillSummary } from '../skills/skill-file.js'
import { formatIssues } from '../release/format-issues.js'
import {
  RELEASE_LIMITS,
  ReleaseTreeError,
  resolveInside,
  WHOLE_RELEASE,
  walkRelease,
  type ReleaseEntry,
} from '../release/release-tree.js'
import { MANIFEST_FILE, manifestSchema, type ConnectorManifest } from './schema.js'

export interface LoadedRelease {
  /** Real absolute path of the release root. */
  root: string
  manifest: ConnectorManifest
  skills: SkillSummary[]
  entries: ReleaseEntry[]
}

const MAX_MANIFEST_BYTES = 256 * 1024

function invalid(message: string, cause?: unknown): TuttiError {
  return new TuttiError(ErrorCodes.MANIFEST_INVALID, `${MANIFEST_FILE}: ${message}`, { cause })
}

/** A tree past tutti's limits: the release is named, not its manifest, and the limits are given. */
function tooLarge(err: ReleaseTreeError): TuttiError {
  const { maxFiles, maxBytes, maxDepth } = RELEASE_LIMITS
  const limits = `${maxFiles} files, ${maxBytes / 1024 / 1024} MiB, ${maxDepth} levels of directories`
  const why = `${err.message} (at most ${limits}, npm dependencies included)`
  return new TuttiError(ErrorCodes.MANIFEST_INVALID, `the release is larger than tutti takes: ${why}`, { cause: err })
}

export function parseManifest(text: string): ConnectorManifest {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw invalid(`not valid JSON (${(err as Error).message})`)
  }
  const result = manifestSchema.safeParse(json)
  if (!result.success) throw invalid(formatIssues(result.error.issues).join('\n'))
  return result.data
}

/**
 * An installed release: read-only, content-addressed and fully validated
 * when it was installed, so only what the daemon needs is read again (the
 * manifest and the Skills), not every file of its node_modules.
 */
export async function loadInstalledRelease(dir: string): Promise<LoadedRelease> {
  return loadRelease(dir, { walk: false })
}

/**
 * Read and fully validate a connector release directory: the manifest, every
 * path it names (inside the release, also after symlinks), and its Skills.
 * Touches nothing on disk.
 */
export async function loadRelease(dir: string, options: { walk: boolean } = { walk: true }): Promise<LoadedRelease> {
  let root: string
  try {
    root = await fs.realpath(dir)
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : 'cannot be read'
    throw new TuttiError(ErrorCodes.MANIFEST_NOT_FOUND, `${dir} ${why}`)
  }
  // gone meanwhile counts as not a directory, reported below
  if (!(await fs.stat(root).catch(() => undefined))?.isDirectory())
    throw new TuttiError(
      ErrorCodes.MANIFEST_NOT_FOUND,
      `${dir} is not a directory (a connector is a directory, or a .tgz of one)`,
    )
  const file = path.join(root, MANIFEST_FILE)
  let text: string
  try {
    const st = await fs.lstat(file)
    if (!st.isFile()) throw invalid('must be a regular file')
    if (st.size > MAX_MANIFEST_BYTES) throw invalid(`larger than ${MAX_MANIFEST_BYTES} bytes`)
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if (err instanceof TuttiError) throw err
    throw new TuttiError(ErrorCodes.MANIFEST_NOT_FOUND, `${MANIFEST_FILE} not found in ${dir}`)
  }
  const manifest = parseManifest(text)
  try {
    const entries = options.walk ? await walkRelease(root) : []
    if (manifest.cli) await resolveInside(root, manifest.cli.entrypoint, 'cli.entrypoint', 'file')
    if (manifest.mcp?.transport === 'stdio') await checkStdioPaths(root, manifest.mcp.command, manifest.mcp.args)
    let skills: SkillSummary[] = []
    if (manifest.skills) {
      const skillsRoot = await resolveInside(root, manifest.skills, 'skills', 'dir')
      skills = await readSkills(root, skillsRoot, manifest.skills)
    }
    return { root, manifest, skills, entries }
  } catch (err) {
    if (err instanceof ReleaseTreeError) throw err.field === WHOLE_RELEASE ? tooLarge(err) : invalid(err.message, err)
    throw err
  }
}

/**
 * A command with a path separator is a file in the release. Arguments are
 * free text, but one that names a path must not climb out of the release.
 */
async function checkStdioPaths(root: string, command: string, args: readonly string[]): Promise<void> {
  if (command.includes('/') || command.includes('\\')) {
    if (path.isAbsolute(command))
      throw new ReleaseTreeError(
        'mcp.command',
        `mcp.command: "${command}" must be a program name or a relative path inside the release, not an absolute path`,
      )
    await resolveInside(root, command, 'mcp.command', 'file')
  }
  for (const [i, arg] of args.entries()) {
    if (arg.split(/[\\/]/).includes('..'))
      throw new ReleaseTreeError(`mcp.args[${i}]`, `mcp.args[${i}]: "${arg}" escapes the release ("..")`)
    const candidate = path.resolve(root, arg)
    const exists = await fs.lstat(candidate).then(
      () => true,
      () => false,
    )
    if (!path.isAbsolute(arg) && exists)
      await resolveInside(root, arg, `mcp.args[${i}]`, 'file').catch(async (err: ReleaseTreeError) => {
        // a directory argument is fine as long as it is inside
        if (!(await fs.stat(candidate)).isDirectory() || err.message.includes('outside')) throw err
      })
  }
}
