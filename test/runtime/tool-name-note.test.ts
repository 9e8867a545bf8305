import { describe, expect, it } from 'vitest'
import { mentionedTools, NOTE_HEADING, withToolNameNote } from '../../src/runtime/skills/tool-name-note.js'

const tool = (upstream: string, key = 'linear') => ({ upstream, published: `${key}_${upstream}` })
const names = (text: string, tools = [tool('search_issues'), tool('echo'), tool('get-sum'), tool('list')]) =>
  mentionedTools(text, tools).map((t) => t.upstream)

describe('which tool names a Skill mentions', () => {
  it('a name with "_" counts anywhere it stands whole; a plain word only in code', () => {
    expect(names('Call search_issues, then echo the result and list them.')).toEqual(['search_issues'])
    expect(names('Call `echo` and `get-sum`, then:\n```\nlist\n```\n')).toEqual(['echo', 'get-sum', 'list'])
    expect(names('Use `echo(text)` once.')).toEqual(['echo'])
  })

  it("a name inside a longer identifier is not the name; Claude Code's mcp__<server>__<tool> is", () => {
    expect(names('Call linear_search_issues or search_issues_v2 or `forget-sum` or `echoes`.')).toEqual([])
    expect(names('Call mcp__linear__search_issues.')).toEqual(['search_issues'])
  })

  it('a tool published under its own name needs no mapping', () => {
    expect(mentionedTools('Call `slack_post`.', [{ upstream: 'slack_post', published: 'slack_post' }])).toEqual([])
  })
})

describe('the note', () => {
  it('follows the text unchanged, after one blank line, one line per name', () => {
    for (const text of ['# T\nbody', '# T\nbody\n', '# T\nbody\n\n']) {
      const out = withToolNameNote(text, [tool('search_issues')])
      expect(out.startsWith(text)).toBe(true)
      expect(out).toContain(`body\n\n${NOTE_HEADING}\n`)
      expect(out.endsWith('- `search_issues` → `linear_search_issues`\n')).toBe(true)
    }
  })
})
