import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import type { StatePaths } from '../paths.js'
import { isInside } from '../release/release-tree.js'
import { mirrorRelease, notedSkills } from '../skills/noted-skills.js'
import type { ToolName } from '../skills/tool-name-note.js'
import type { SkillRoot } from './prepared-runtime.js'

/** Every session's projection files live under `sessions/<id>/`, id derived from workspace + session. */
export function sessionId(workspace: string, session: string): string {
  return createHash('sha256').update(workspace).update('\0').update(session).digest('hex').slice(0, 16)
}

/**
 * A fresh, empty directory for one session's projections: what an earlier
 * preparation of the same session left there (an old CODEX_HOME, old
 * Skill links) is removed first.
 */
export async function freshSessionDir(paths: StatePaths, workspace: string, session: string): Promise<string> {
  const dir = paths.sessionDir(sessionId(workspace, session))
  await fs.rm(dir, { recursive: true, force: true })
  await ensurePrivateDir(dir)
  return dir
}

/** A revoked session's projections go with its token. */
export async function removeSessionDirs(
  paths: StatePaths,
  sessions: ReadonlyArray<{ workspace: string; session: string }>,
): Promise<void> {
  for (const s of sessions) {
    const id = sessionId(s.workspace, s.session)
    await fs.rm(paths.sessionDir(id), { recursive: true, force: true })
    await fs.rm(paths.sessionBinDir(id), { recursive: true, force: true })
  }
}

/** Beside a Skill root: the mirrors of releases whose Skills carry a tool-name note (not a Skill root itself). */
const NOTED_SKILLS_DIR = '.tutti-noted-skills'

/** A Skill root as the daemon hands it out: the Skills it holds, each with its directory, and its connector's tools. */
export interface SkillRootWithSkills extends SkillRoot {
  skills: ReadonlyArray<{ name: string; dir: string }>
  /** The installed release's real root, which holds `dir`. */
  releaseRoot?: string
  /** The names the connector's tools are served under now (absent: none listed yet). */
  tools?: readonly ToolName[]
}

/**
 * Fill `target` with one entry per connector Skill, named after the Skill:
 * a symlink to the Skill's directory in the installed release, or, when it
 * names tools by their upstream names, to that Skill with a note mapping
 * them, in a mirror of its release beside `target` (skills/noted-skills.ts). Both
 * are rebuilt whole, so Skills of connectors that went away disappear. The
 * Skills come from the daemon's snapshot, validated at install.
 */
export async function linkSkills(target: string, roots: readonly SkillRootWithSkills[]): Promise<string[]> {
  const mirrors = path.join(path.dirname(target), NOTED_SKILLS_DIR)
  await fs.rm(target, { recursive: true, force: true })
  await fs.rm(mirrors, { recursive: true, force: true })
  await ensurePrivateDir(target)
  const linked: string[] = []
  for (const root of roots) {
    const release = root.releaseRoot ?? root.dir
    // a Skill the release's tree does not hold by that path cannot be mirrored: it is linked as it is
    const inTree = root.skills.map((s) => s.dir).filter((dir) => isInside(release, dir))
    const noted = await notedSkills(inTree, root.tools ?? [])
    const mirror = path.join(mirrors, root.connector)
    if (noted.size) await mirrorRelease(release, mirror, noted)
    for (const skill of root.skills) {
      // two connectors with one Skill name: the first keeps it (names are unique within a connector)
      if (linked.includes(skill.name)) continue
      const dir = noted.has(skill.dir) ? path.join(mirror, path.relative(release, skill.dir)) : skill.dir
      await fs.symlink(dir, path.join(target, skill.name), 'dir')
      linked.push(skill.name)
    }
  }
  return linked
}
