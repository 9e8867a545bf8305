/**
 * A Skill names tools as its server does (`search_issues`), while the model
 * is given them as published (`linear_search_issues`). The note appended to
 * a Skill's SKILL.md in a session's projection maps the names it mentions.
 */

/** One tool of a connector: the name its server gives it and the name it is published under. */
export interface ToolName {
  readonly upstream: string
  readonly published: string
}

/** A character that continues an identifier: a name with one beside it is part of a longer name. */
const IDENTIFIER_CHAR = /[A-Za-z0-9_-]/
/** Code in Markdown: fenced blocks (``` or ~~~, to the end if unclosed) and inline code spans. */
const CODE = /```[\s\S]*?(?:```|$)|~~~[\s\S]*?(?:~~~|$)|`[^`\n]+`/g
/** Claude Code's spelling of an MCP tool, `mcp__<server>__<tool>`: a tool name may follow `__`. */
const SERVER_SEPARATOR = '__'

export const NOTE_HEADING = '## Tool names in this session'

/**
 * The tools `text` mentions whose published name differs. A name counts as
 * mentioned where it stands whole (no identifier character on either side,
 * or `__` before it, as in `mcp__linear__search_issues`), and then only in
 * code (a code span or block) or, for a name containing `_`, anywhere: a
 * tool called `echo` or `get-sum` is not mentioned by prose that says
 * "echo the result", while `search_issues` is no ordinary word.
 */
export function mentionedTools(text: string, tools: readonly ToolName[]): ToolName[] {
  const code = [...text.matchAll(CODE)].map((m) => m[0]).join('\n')
  return tools
    .filter((t) => t.published !== t.upstream && t.upstream !== '')
    .filter((t) => standsWhole(code, t.upstream) || (t.upstream.includes('_') && standsWhole(text, t.upstream)))
    .sort((a, b) => (a.upstream < b.upstream ? -1 : a.upstream > b.upstream ? 1 : 0))
}

function standsWhole(text: string, name: string): boolean {
  for (let at = text.indexOf(name); at !== -1; at = text.indexOf(name, at + 1)) {
    const before = at === 0 ? '' : text[at - 1]!
    const after = text[at + name.length] ?? ''
    const opens = before === '' || !IDENTIFIER_CHAR.test(before) || text.slice(0, at).endsWith(SERVER_SEPARATOR)
    if (opens && (after === '' || !IDENTIFIER_CHAR.test(after))) return true
  }
  return false
}

/** `text` with the note for `mentioned` appended (a separating blank line added as needed). */
export function withToolNameNote(text: string, mentioned: readonly ToolName[]): string {
  const lines = [
    NOTE_HEADING,
    '',
    'Written by tutti: this Skill names tools as their server does. In this session they are tools of the MCP',
    'server `connector` under the names on the right (Claude Code shows them as `mcp__connector__<name>`).',
    'Call them by those names:',
    '',
    ...mentioned.map((t) => `- \`${t.upstream}\` → \`${t.published}\``),
  ]
  const separator = text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n'
  return `${text}${separator}${lines.join('\n')}\n`
}
