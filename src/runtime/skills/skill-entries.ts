import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import type { Skill } from '@modelcontextprotocol/server/ext/skills'
import { SKILL_LIMITS as EXTENSION_LIMITS } from '@modelcontextprotocol/server/ext/skills'
import { parse as parseYaml } from 'yaml'
import { isInside, RELEASE_LIMITS } from '../release/release-tree.js'
import { AGENT_SKILL_NAME, DIRECTORY, MARKDOWN, mimeTypeOf, SKILL_FILE, skillUri } from './skill-uris.js'
import { ErrorCodes, TuttiError } from '../errors.js'

/** One file of a Skill as served: its URI, where its bytes are, and what they were when listed. */
export interface SkillFile {
  readonly uri: string
  readonly path: string
  readonly digest: string
  readonly size: number
  readonly mimeType: string
  /** Valid UTF-8: served as `text` (the same bytes again when encoded), else as a base64 `blob`. */
  readonly utf8: boolean
}

export interface SkillChild {
  readonly uri: string
  readonly name: string
  readonly mimeType: string
  readonly size?: number
}

/** A Skill ready to serve: its extension entry, every file, and every directory's children. */
export interface ServedSkill {
  readonly key: string
  readonly entry: Skill
  /** The real path of the Skill's directory: no file outside it is ever read. */
  readonly realRoot: string
  readonly files: ReadonlyMap<string, SkillFile>
  readonly directories: ReadonlyMap<string, readonly SkillChild[]>
}

export type SkillBuild = { ok: true; skill: ServedSkill } | { ok: false; reason: string }

/** Streamed in chunks this big, so hashing a 16 MiB Skill never holds the event loop for long. */
const HASH_CHUNK_BYTES = 256 * 1024
/** The same block the extension's hosts parse (a `---` line, YAML, a `---` line). */
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

interface Walked {
  files: Array<{ rel: string; path: string }>
  dirs: string[]
  bytes: number
}

/**
 * The Skill `name` of connector `key`, in directory `dir`, as the skills
 * extension serves it. A Skill the extension would not allow (its limits,
 * its naming rules, front matter that JSON cannot carry unchanged) is not
 * served, with the reason; symlinks that leave the Skill's directory, and
 * anything but regular files and directories, are not part of it.
 */
export async function buildSkill(key: string, name: string, dir: string): Promise<SkillBuild> {
  try {
    const realRoot = await fs.realpath(dir)
    const walked = await walk(realRoot)
    if (typeof walked === 'string') return { ok: false, reason: walked }
    const manifest = walked.files.find((f) => f.rel === SKILL_FILE)
    if (!manifest) return { ok: false, reason: `no ${SKILL_FILE} at the Skill's root` }
    const bytes = await fs.readFile(manifest.path)
    const frontmatter = frontMatterOf(bytes, name)
    if (typeof frontmatter === 'string') return { ok: false, reason: frontmatter }
    const files = new Map<string, SkillFile>()
    for (const f of walked.files) {
      const { digest, size, utf8 } =
        f === manifest ? new ContentDigest().update(bytes).finish() : await hashFile(f.path)
      const uri = skillUri(key, name, f.rel)
      files.set(uri, {
        uri,
        path: f.path,
        digest,
        size,
        utf8,
        mimeType: f === manifest ? MARKDOWN : mimeTypeOf(f.rel, utf8),
      })
    }
    const total = [...files.values()].reduce((n, f) => n + f.size, 0)
    if (total > EXTENSION_LIMITS.bytes)
      return { ok: false, reason: `its files are ${total} bytes, more than the extension's ${EXTENSION_LIMITS.bytes}` }
    const uri = skillUri(key, name, SKILL_FILE)
    const resources = [...files.values()]
      .sort((a, b) => compare(a.uri, b.uri))
      .map((f) => ({ uri: f.uri, digest: f.digest, size: f.size }))
    const entry: Skill = { uri, frontmatter, resources }
    return { ok: true, skill: { key, entry, realRoot, files, directories: childrenOf(key, name, walked, files) } }
  } catch (err) {
    // the reason goes into the Skill's listing as why it is not served
    return { ok: false, reason: `it cannot be read: ${(err as Error).message}` }
  }
}

/** The bytes of a listed file, only while they are still inside the Skill and still what was listed. */
export async function readServedFile(skill: ServedSkill, file: SkillFile): Promise<Buffer> {
  const real = await fs.realpath(file.path)
  if (!isInside(skill.realRoot, real)) throw releaseChanged(`${file.uri} now resolves outside its Skill`)
  const bytes = await fs.readFile(real)
  if (bytes.length !== file.size || new ContentDigest().update(bytes).finish().digest !== file.digest)
    throw releaseChanged(`${file.uri} changed since it was listed`)
  return bytes
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

async function walk(realRoot: string): Promise<Walked | string> {
  const out: Walked = { files: [], dirs: [], bytes: 0 }
  const visit = async (rel: string, depth: number): Promise<string | undefined> => {
    if (depth > RELEASE_LIMITS.maxDepth) return `directories nested deeper than ${RELEASE_LIMITS.maxDepth}`
    const names = (await fs.readdir(path.join(realRoot, rel))).sort(compare)
    for (const name of names) {
      const childRel = rel ? `${rel}/${name}` : name
      const abs = path.join(realRoot, childRel)
      let st = await fs.lstat(abs)
      let real = abs
      if (st.isSymbolicLink()) {
        // a dangling link resolves to nothing, which no Skill root contains: it is skipped below
        real = await fs.realpath(abs).catch(() => '')
        // a link out of the Skill, or to a directory (which could loop), is not part of what is served
        if (!real || !isInside(realRoot, real)) continue
        st = await fs.stat(real)
        if (!st.isFile()) continue
      }
      if (st.isDirectory()) {
        out.dirs.push(childRel)
        const problem = await visit(childRel, depth + 1)
        if (problem) return problem
      } else if (st.isFile()) {
        out.files.push({ rel: childRel, path: real })
        out.bytes += st.size
        if (out.files.length > EXTENSION_LIMITS.files)
          return `more than the extension's ${EXTENSION_LIMITS.files} files`
        if (out.bytes > EXTENSION_LIMITS.bytes)
          return `its files are more than the extension's ${EXTENSION_LIMITS.bytes} bytes`
      }
    }
    return undefined
  }
  return (await visit('', 0)) ?? out
}

function frontMatterOf(bytes: Buffer, name: string): Skill['frontmatter'] | string {
  const text = utf8Text(bytes)
  if (text === undefined) return `${SKILL_FILE} is not UTF-8`
  const match = FRONT_MATTER.exec(text)
  if (!match) return `${SKILL_FILE} has no front matter`
  let data: unknown
  try {
    data = parseYaml(match[1]!)
  } catch (err) {
    // returned as the reason the Skill is not served
    return `its front matter is not YAML: ${(err as Error).message.split('\n')[0]}`
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return 'its front matter is not a mapping'
  // the entry must carry the front matter as the file has it: a value JSON would change is not served
  const carried = JSON.parse(JSON.stringify(data)) as Record<string, unknown>
  if (!isDeepStrictEqual(carried, data)) return 'its front matter has values JSON cannot carry unchanged'
  if (carried.name !== name) return `its front matter names "${String(carried.name)}", not "${name}"`
  if (!AGENT_SKILL_NAME.test(name))
    return `"${name}" breaks the Agent Skills naming rules (no leading, trailing or doubled "-")`
  if (typeof carried.description !== 'string' || !carried.description) return 'its front matter has no description'
  return carried as Skill['frontmatter']
}

/** `ignoreBOM`: a BOM stays in the text, so the text encodes to the very bytes digested. */
function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    // a fatal decoder throws on bytes that are not UTF-8: the caller serves them as a base64 blob
    return undefined
  }
}

/** SHA-256, byte count and whether the bytes are UTF-8, fed chunk by chunk. */
class ContentDigest {
  private readonly hash = createHash('sha256')
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  private size = 0
  private utf8 = true

  update(chunk: Uint8Array): this {
    this.hash.update(chunk)
    this.size += chunk.length
    if (this.utf8) this.utf8 = this.decodes(chunk, true)
    return this
  }

  finish(): { digest: string; size: number; utf8: boolean } {
    if (this.utf8) this.utf8 = this.decodes(new Uint8Array(), false)
    return { digest: `sha256:${this.hash.digest('hex')}`, size: this.size, utf8: this.utf8 }
  }

  private decodes(chunk: Uint8Array, stream: boolean): boolean {
    try {
      this.decoder.decode(chunk, { stream })
      return true
    } catch {
      // not UTF-8 (a fatal decoder throws): the answer is false
      return false
    }
  }
}

async function hashFile(file: string): Promise<{ digest: string; size: number; utf8: boolean }> {
  const digest = new ContentDigest()
  for await (const chunk of createReadStream(file, { highWaterMark: HASH_CHUNK_BYTES })) digest.update(chunk as Buffer)
  return digest.finish()
}

function childrenOf(
  key: string,
  name: string,
  walked: Walked,
  files: ReadonlyMap<string, SkillFile>,
): Map<string, SkillChild[]> {
  const directories = new Map<string, SkillChild[]>([['', []]])
  for (const d of walked.dirs) directories.set(d, [])
  const add = (rel: string, child: SkillChild): void => {
    const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : ''
    directories.get(parent)?.push(child)
  }
  for (const d of walked.dirs)
    add(d, { uri: skillUri(key, name, d), name: path.posix.basename(d), mimeType: DIRECTORY })
  for (const f of walked.files) {
    const file = files.get(skillUri(key, name, f.rel))!
    add(f.rel, { uri: file.uri, name: path.posix.basename(f.rel), mimeType: file.mimeType, size: file.size })
  }
  const byUri = new Map<string, SkillChild[]>()
  for (const [rel, children] of directories)
    byUri.set(
      skillUri(key, name, rel),
      children.sort((a, b) => compare(a.uri, b.uri)),
    )
  return byUri
}

const releaseChanged = (message: string) => new TuttiError(ErrorCodes.RELEASE_CHANGED, message)
