import fs from 'node:fs/promises'
import path from 'node:path'
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic-write.js'
import { isInside } from '../release/release-tree.js'
import { SKILL_FILE } from './skill-uris.js'
import { mentionedTools, withToolNameNote, type ToolName } from './tool-name-note.js'

/**
 * Skills that name their connector's tools by upstream names get a note
 * mapping those names (tool-name-note.ts). The names are the served ones,
 * known only once the upstream has listed its tools, so the note is made
 * per session: the release stays as stored (it is content-addressed) and
 * the user's plugin source is never touched.
 */

/** By Skill directory: its SKILL.md with the note, for each Skill that mentions such a name. */
export async function notedSkills(dirs: readonly string[], tools: readonly ToolName[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  if (!tools.length) return out
  for (const dir of dirs) {
    // a folder without a readable SKILL.md is no Skill: it gets no note
    const text = await fs.readFile(path.join(dir, SKILL_FILE), 'utf8').catch(() => undefined)
    const mentioned = text === undefined ? [] : mentionedTools(text, tools)
    if (mentioned.length) out.set(dir, withToolNameNote(text!, mentioned))
  }
  return out
}

/**
 * A copy of the release's tree at `to` made of links: only the directories
 * on the way to a noted Skill are real, and hold that Skill's new SKILL.md.
 * Everything else, the Skill's other files included, is a link into the
 * release. The Skill keeps its place in the tree, so an agent that names a
 * Skill after the plugin manifest above it (Codex: `linear:linear-triage`)
 * names it as before.
 */
export async function mirrorRelease(from: string, to: string, noted: ReadonlyMap<string, string>): Promise<void> {
  await ensurePrivateDir(to)
  const note = noted.get(from)
  for (const entry of await fs.readdir(from)) {
    const source = path.join(from, entry)
    const target = path.join(to, entry)
    if (note !== undefined && entry === SKILL_FILE) await writeFileAtomic(target, note)
    else if ([...noted.keys()].some((dir) => isInside(source, dir))) await mirrorRelease(source, target, noted)
    else await fs.symlink(source, target)
  }
}
