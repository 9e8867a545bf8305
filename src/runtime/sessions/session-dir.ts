import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir } from '../fs/atomic-write.js'
import { readSkills } from '../skills/skill-file.js'
import type { StatePaths } from '../paths.js'
import type { SkillRoot } from './prepared-runtime.js'

/** Every session's projection files live under `sessions/<id>/`, id derived from workspace + session. */
export function sessionId(workspace: string, session: string): string {
  return createHash('sha256').update(workspace).update('\0').update(session).digest('hex').slice(0, 16)
}

export async function sessionDir(paths: StatePaths, workspace: string, session: string): Promise<string> {
  const dir = paths.sessionDir(sessionId(workspace, session))
  await ensurePrivateDir(dir)
  return dir
}

/**
 * Fill `target` with one entry per connector Skill: a symlink to the Skill's
 * directory in the installed release, named after the Skill. The directory is
 * rebuilt whole, so Skills of connectors that went away disappear.
 */
export async function linkSkills(target: string, roots: readonly SkillRoot[]): Promise<string[]> {
  await fs.rm(target, { recursive: true, force: true })
  await ensurePrivateDir(target)
  const linked: string[] = []
  for (const root of roots) {
    const release = path.dirname(root.dir)
    for (const skill of await readSkills(release, root.dir, path.basename(root.dir)).catch(() => [])) {
      const link = path.join(target, skill.name)
      await fs.symlink(path.join(root.dir, skill.dir), link, 'dir').catch(() => {})
      linked.push(skill.name)
    }
  }
  return linked
}
