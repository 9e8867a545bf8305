import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic-write.js'
import { SKILL_FILE } from '../skills/skill-uris.js'
import { mentionedTools, withToolNameNote, type ToolName } from '../skills/tool-name-note.js'

/**
 * One connector Skill in a session's Skill root, at `at`. A Skill that
 * mentions none of its connector's tools by a name other than the published
 * one is a link to its directory in the release. One that does becomes a
 * directory of links to the release's files, beside a SKILL.md that is the
 * release's own followed by the note mapping those names (tool-name-note.ts).
 * The names are the served ones, known only once the upstream has listed
 * its tools, so the note is made here, per session: the release stays as
 * stored (it is content-addressed) and the user's plugin source is never
 * touched. Returns the names mapped.
 */
export async function projectSkill(at: string, skillDir: string, tools: readonly ToolName[]): Promise<ToolName[]> {
  const file = path.join(skillDir, SKILL_FILE)
  const text = tools.length ? await fs.readFile(file, 'utf8').catch(() => undefined) : undefined
  const mentioned = text === undefined ? [] : mentionedTools(text, tools)
  if (!mentioned.length) {
    await fs.symlink(skillDir, at, 'dir')
    return []
  }
  await ensurePrivateDir(at)
  for (const entry of await fs.readdir(skillDir)) {
    if (entry !== SKILL_FILE) await fs.symlink(path.join(skillDir, entry), path.join(at, entry))
  }
  await writeFileAtomic(path.join(at, SKILL_FILE), withToolNameNote(text!, mentioned))
  return mentioned
}
