import fs from 'node:fs/promises'
import path from 'node:path'
import { parse as parseYaml } from 'yaml'
import { z } from 'zod'
import { formatIssues } from '../release/format-issues.js'
import { isInside, ReleaseTreeError } from '../release/release-tree.js'

/**
 * Connector Skills: `<skills>/<dir>/SKILL.md` with YAML front matter. Only
 * the summary is read here; agents read the content natively from the Skill
 * roots a session projection hands them.
 */
export const SKILL_LIMITS = { maxSkills: 64, maxSkillFileBytes: 256 * 1024 } as const

const frontMatterSchema = z.looseObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be lowercase letters, digits and "-", at most 64 chars'),
  description: z.string().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters'),
  title: z.string().min(1).max(120).optional(),
})

export interface SkillSummary {
  name: string
  title?: string
  description: string
  /** Directory name under the skills root. */
  dir: string
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/

export function parseSkillFile(text: string, where: string): Omit<SkillSummary, 'dir'> {
  const match = FRONT_MATTER.exec(text)
  if (!match) throw new ReleaseTreeError(where, `${where}: missing YAML front matter (--- name/description ---)`)
  let data: unknown
  try {
    data = parseYaml(match[1]!)
  } catch (err) {
    throw new ReleaseTreeError(
      where,
      `${where}: front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    )
  }
  const parsed = frontMatterSchema.safeParse(data ?? {})
  if (!parsed.success) {
    throw new ReleaseTreeError(
      where,
      formatIssues(parsed.error.issues)
        .map((line) => `${where}: ${line}`)
        .join('\n'),
    )
  }
  const { name, description, title } = parsed.data
  return title ? { name, title, description } : { name, description }
}

/** Read and validate every Skill under a release's skills root. */
export async function readSkills(releaseRoot: string, skillsRoot: string, field = 'skills'): Promise<SkillSummary[]> {
  const names = (await fs.readdir(skillsRoot, { withFileTypes: true }))
    .filter((d) => !d.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
  if (names.length > SKILL_LIMITS.maxSkills)
    throw new ReleaseTreeError(field, `${field}: more than ${SKILL_LIMITS.maxSkills} skills`)
  const skills: SkillSummary[] = []
  const seen = new Map<string, string>()
  for (const entry of names) {
    const dir = path.join(skillsRoot, entry.name)
    const where = `${field}/${entry.name}/SKILL.md`
    const st = await fs.lstat(dir)
    if (st.isSymbolicLink()) {
      const real = await fs.realpath(dir)
      if (!isInside(releaseRoot, real))
        throw new ReleaseTreeError(where, `${field}/${entry.name}: symlink points outside the release`)
    }
    if (!(await fs.stat(dir)).isDirectory()) continue
    const file = path.join(dir, 'SKILL.md')
    let fst: Awaited<ReturnType<typeof fs.lstat>>
    try {
      fst = await fs.lstat(file)
    } catch {
      throw new ReleaseTreeError(
        where,
        `${where}: missing (every folder under "${field}" is a Skill and needs a SKILL.md)`,
      )
    }
    if (fst.isSymbolicLink() && !isInside(releaseRoot, await fs.realpath(file))) {
      throw new ReleaseTreeError(where, `${where}: symlink points outside the release`)
    }
    if (fst.size > SKILL_LIMITS.maxSkillFileBytes)
      throw new ReleaseTreeError(where, `${where}: larger than ${SKILL_LIMITS.maxSkillFileBytes} bytes`)
    const summary = parseSkillFile(await fs.readFile(file, 'utf8'), where)
    const previous = seen.get(summary.name)
    if (previous)
      throw new ReleaseTreeError(
        where,
        `${where}: duplicate skill name "${summary.name}" (also in ${field}/${previous})`,
      )
    seen.set(summary.name, entry.name)
    skills.push({ ...summary, dir: entry.name })
  }
  return skills
}
