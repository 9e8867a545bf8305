import fs from 'node:fs'
import path from 'node:path'
import { makeConnector } from './connector-fixture.js'
import { childPids, REPO } from './tutti.js'

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
    mcp: {
      transport: 'stdio',
      command: 'mcp-server-memory',
      env: { MEMORY_FILE_PATH: '${TUTTI_CONNECTOR_DATA}/memory.jsonl' },
    },
  }
  return makeConnector(manifest, {
    [`skills/${key}-workflow/SKILL.md`]:
      `---\nname: ${key}-workflow\ndescription: ${skillDescription(key)}\n---\n` + `# ${key} workflow\n`,
  })
}

export const skillDescription = (key: string): string => `Keep ${key} notes as entities in the ${key} graph`

/** The nine tools of the npm memory server. */
export const MEMORY_TOOLS = [
  'add_observations',
  'create_entities',
  'create_relations',
  'delete_entities',
  'delete_observations',
  'delete_relations',
  'open_nodes',
  'read_graph',
  'search_nodes',
]

/** Files under `dir` whose bytes contain `needle`, or whose text matches it (paths relative to dir). */
export function filesContaining(dir: string, needle: string | RegExp): string[] {
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
          const bytes = fs.readFileSync(p)
          if (typeof needle === 'string' ? bytes.includes(needle) : needle.test(bytes.toString('latin1')))
            out.push(path.relative(dir, p))
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

/**
 * Whether the built CLI has a (hidden) command, e.g. 'session:bridge': the
 * tests of `session exec` and `session bridge` were written against the
 * issue's interface before the commands landed, and run once they are built.
 */
export function cliHas(command: string): boolean {
  try {
    return command in (JSON.parse(fs.readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8')).commands ?? {})
  } catch {
    return false
  }
}
