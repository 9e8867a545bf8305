import type { Resource } from '@modelcontextprotocol/server'
import type { Skill } from '@modelcontextprotocol/server/ext/skills'
import type { Logger } from '../log/logger.js'
import type { SkillRootOf } from '../reconcile/connector-snapshot.js'
import { SessionView } from '../sessions/session-view.js'
import {
  buildSkill,
  readServedFile,
  type ServedSkill,
  type SkillBuild,
  type SkillChild,
  type SkillFile,
} from '../skills/skill-entries.js'
import { canonicalSkillUri, MARKDOWN } from '../skills/skill-uris.js'

/** Entries per page of skills/list, resources/list and directory reads. */
export const SKILL_PAGE_SIZE = 100

export interface Page<T> {
  items: T[]
  nextCursor?: string
}

export class BadCursorError extends Error {}

/** One file's content for resources/read: the listed bytes, as text when they are UTF-8. */
export type SkillContent = { uri: string; mimeType: string } & ({ text: string } | { blob: string })

/**
 * The connector Skills the connector MCP server serves (the SEP-2640 skills
 * extension): those of the active connectors, as the daemon's snapshots name
 * them (`update`). Each Skill directory is walked and hashed once: a
 * release directory is content-addressed and read-only, so its path names
 * its bytes. A Skill whose connector is no longer active goes at once; one
 * that comes is served once built, and every answer waits for the builds
 * started before it. Any change to what is listed is announced (`onChange`).
 */
export class SkillCatalogue {
  private skills: ServedSkill[] = []
  private readonly bySkillUri = new Map<string, ServedSkill>()
  private readonly files = new Map<string, { skill: ServedSkill; file: SkillFile }>()
  private readonly directories = new Map<string, { key: string; children: readonly SkillChild[] }>()
  /** By Skill directory: the build of that directory's content. */
  private readonly builds = new Map<
    string,
    { key: string; name: string; result?: SkillBuild; promise: Promise<SkillBuild> }
  >()
  private rootsPrint = '[]'
  private listedPrint = '[]'
  /** By view print: the Skills that view sees, for the current publication. */
  private readonly byView = new Map<string, { skills: ServedSkill[]; print: string }>()
  private pending: Promise<void> = Promise.resolve()
  private generation = 0
  private readonly listeners = new Set<() => void>()

  constructor(
    private readonly log: Logger,
    private readonly pageSize = SKILL_PAGE_SIZE,
  ) {}

  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** The Skill roots of the active connectors, now. */
  update(roots: readonly SkillRootOf[]): void {
    const wanted = roots.flatMap((r) => r.skills.map((s) => ({ key: r.connector, name: s.name, dir: s.dir })))
    const print = JSON.stringify(wanted)
    if (print === this.rootsPrint) return
    this.rootsPrint = print
    const generation = ++this.generation
    for (const dir of [...this.builds.keys()]) if (!wanted.some((w) => w.dir === dir)) this.builds.delete(dir)
    for (const w of wanted) {
      if (this.builds.has(w.dir)) continue
      const build = { key: w.key, name: w.name, promise: buildSkill(w.key, w.name, w.dir) } as {
        key: string
        name: string
        result?: SkillBuild
        promise: Promise<SkillBuild>
      }
      void build.promise.then((result) => {
        build.result = result
        if (!result.ok)
          this.log.warn('connector Skill not served over MCP', {
            connector: w.key,
            skill: w.name,
            reason: result.reason,
          })
      })
      this.builds.set(w.dir, build)
    }
    // what is gone goes now; what comes, once built
    this.publish()
    const builds = [...this.builds.values()].map((b) => b.promise)
    this.pending = Promise.all(builds).then(() => {
      if (generation === this.generation) this.publish()
    })
  }

  /** Resolves once every build started so far has been published. */
  ready(): Promise<void> {
    return this.pending
  }

  /** The Skills a session's view sees, and a print of them (equal prints: no change that session can see). */
  seen(view: SessionView): { skills: readonly ServedSkill[]; print: string } {
    if (view.whole) return { skills: this.skills, print: this.listedPrint }
    let seen = this.byView.get(view.print)
    if (!seen) {
      const skills = this.skills.filter((s) => view.connector(s.key))
      seen = { skills, print: JSON.stringify(skills.map((s) => s.entry)) }
      this.byView.set(view.print, seen)
    }
    return seen
  }

  async list(cursor: string | undefined, view: SessionView = SessionView.WHOLE): Promise<Page<Skill>> {
    await this.ready()
    return page(
      this.seen(view).skills,
      cursor,
      this.pageSize,
      (s) => s.entry.uri,
      (s) => s.entry,
    )
  }

  async get(uri: string, view: SessionView = SessionView.WHOLE): Promise<Skill | undefined> {
    await this.ready()
    const canonical = canonicalSkillUri(uri)
    const skill = canonical === undefined ? undefined : this.bySkillUri.get(canonical)
    return skill && view.connector(skill.key) ? skill.entry : undefined
  }

  /** resources/list: each Skill's SKILL.md, named and described by its front matter. */
  async resources(cursor: string | undefined, view: SessionView = SessionView.WHOLE): Promise<Page<Resource>> {
    await this.ready()
    return page(
      this.seen(view).skills,
      cursor,
      this.pageSize,
      (s) => s.entry.uri,
      (s) => skillResource(s),
    )
  }

  /** resources/list's entries of the Skills `view` sees (each Skill's SKILL.md), sorted by URI, unpaged. */
  async resourceEntries(view: SessionView = SessionView.WHOLE): Promise<Resource[]> {
    await this.ready()
    return this.seen(view).skills.map(skillResource)
  }

  /** undefined: no file of a served Skill has this URI. */
  async read(uri: string, view: SessionView = SessionView.WHOLE): Promise<SkillContent | undefined> {
    await this.ready()
    const canonical = canonicalSkillUri(uri)
    const found = canonical === undefined ? undefined : this.files.get(canonical)
    if (!found || !view.connector(found.skill.key)) return undefined
    const bytes = await readServedFile(found.skill, found.file)
    const { uri: served, mimeType } = found.file
    return found.file.utf8
      ? { uri: served, mimeType, text: bytes.toString('utf8') }
      : { uri: served, mimeType, blob: bytes.toString('base64') }
  }

  /** undefined: not a directory of a served Skill. */
  async directory(
    uri: string,
    cursor: string | undefined,
    view: SessionView = SessionView.WHOLE,
  ): Promise<Page<SkillChild> | undefined> {
    await this.ready()
    const canonical = canonicalSkillUri(uri)
    const found = canonical === undefined ? undefined : this.directories.get(canonical)
    const children = found && view.connector(found.key) ? found.children : undefined
    return (
      children &&
      page(
        children,
        cursor,
        this.pageSize,
        (c) => c.uri,
        (c) => c,
      )
    )
  }

  private publish(): void {
    const served = [...this.builds.values()].flatMap((b) => (b.result?.ok ? [b.result.skill] : []))
    this.skills = served.sort((a, b) => (a.entry.uri < b.entry.uri ? -1 : a.entry.uri > b.entry.uri ? 1 : 0))
    this.bySkillUri.clear()
    this.files.clear()
    this.directories.clear()
    for (const skill of this.skills) {
      this.bySkillUri.set(skill.entry.uri, skill)
      for (const file of skill.files.values()) this.files.set(file.uri, { skill, file })
      for (const [uri, children] of skill.directories) this.directories.set(uri, { key: skill.key, children })
    }
    this.byView.clear()
    const print = JSON.stringify(this.skills.map((s) => s.entry))
    if (print === this.listedPrint) return
    this.listedPrint = print
    for (const listener of this.listeners) listener()
  }
}

function skillResource(skill: ServedSkill): Resource {
  const { uri, frontmatter } = skill.entry
  const title = typeof frontmatter.title === 'string' ? { title: frontmatter.title } : {}
  const size = skill.files.get(uri)?.size
  return {
    uri,
    name: frontmatter.name,
    ...title,
    description: frontmatter.description,
    mimeType: MARKDOWN,
    ...(size === undefined ? {} : { size }),
  }
}

/**
 * Keyset pages over a list sorted by key: the cursor is the last key of
 * the page before, so a listing that changes between pages neither
 * repeats nor skips what stayed.
 */
function page<T, U>(
  sorted: readonly T[],
  cursor: string | undefined,
  size: number,
  keyOf: (t: T) => string,
  view: (t: T) => U,
): Page<U> {
  let start = 0
  if (cursor !== undefined) {
    const after = Buffer.from(cursor, 'base64url').toString('utf8')
    if (!after || Buffer.from(after, 'utf8').toString('base64url') !== cursor)
      throw new BadCursorError(`unknown cursor "${cursor.slice(0, 64)}"`)
    start = sorted.findIndex((t) => keyOf(t) > after)
    if (start < 0) start = sorted.length
  }
  const items = sorted.slice(start, start + size)
  const more = start + size < sorted.length
  return {
    items: items.map(view),
    ...(more ? { nextCursor: Buffer.from(keyOf(items[items.length - 1]!), 'utf8').toString('base64url') } : {}),
  }
}
