import fs from 'node:fs'
import path from 'node:path'
import { makeConnector } from './connector-fixture.js'
import { childPids } from './tutti.js'

/**
 * A connector the model should get to see: the npm memory server's nine
 * tools under `<key>_…` and one Skill `<key>-workflow` whose description is
 * unmistakable in a prompt.
 */
export function seenConnector(key: string): string {
  const manifest = {
    schemaVersion: 1,
    key,
    name: `Seen ${key}`,
    version: '1.0.0',
    description: `memory graph ${key} (npm @modelcontextprotocol/server-memory)`,
    auth: { kind: 'none' },
    skills: 'skills',
    mcp: { transport: 'stdio', command: 'mcp-server-memory', env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/memory.jsonl' } },
  }
  return makeConnector(manifest, { [`skills/${key}-workflow/SKILL.md`]: `---\nname: ${key}-workflow\ndescription: ${skillDescription(key)}\n---\n# ${key} workflow\n` })
}

export const skillDescription = (key: string): string => `Keep ${key} notes as entities in the ${key} graph`

/** The nine tools of the npm memory server. */
export const MEMORY_TOOLS = ['add_observations', 'create_entities', 'create_relations', 'delete_entities', 'delete_observations', 'delete_relations', 'open_nodes', 'read_graph', 'search_nodes']

/** Files under `dir` whose text contains `needle` (paths relative to dir). */
export function filesContaining(dir: string, needle: string): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile()) {
        try {
          if (fs.readFileSync(p).includes(needle)) out.push(path.relative(dir, p))
        } catch {
          // went away while we looked
        }
      }
    }
  }
  walk(dir)
  return out
}

/** The command lines of `pid` and every process below it (what `ps` shows of an agent session). */
export function treeArgv(pid: number): string[] {
  const out: string[] = []
  const visit = (p: number): void => {
    try {
      out.push(fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' '))
    } catch {
      return
    }
    for (const c of childPids(p)) visit(c)
  }
  visit(pid)
  return out
}
