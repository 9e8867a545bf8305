#!/usr/bin/env node
// The notes connector's CLI. It reads and writes the same knowledge graph
// file as the connector's MCP server (JSON lines in $TUTTI_CONNECTOR_DATA).
import fs from 'node:fs'
import path from 'node:path'

const VERSION = '1.0.0'
const dataDir = process.env.TUTTI_CONNECTOR_DATA
const file = dataDir ? path.join(dataDir, 'memory.jsonl') : undefined

function readGraph() {
  if (!file || !fs.existsSync(file)) return []
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

const [command, ...rest] = process.argv.slice(2)
switch (command) {
  case '--version':
  case '-v':
    process.stdout.write(`${VERSION}\n`)
    break
  case 'list': {
    const entities = readGraph().filter((r) => r.type === 'entity')
    if (entities.length === 0) process.stdout.write('no notes yet\n')
    for (const e of entities) process.stdout.write(`${e.name} (${e.entityType}): ${e.observations.join('; ')}\n`)
    break
  }
  case 'add': {
    const [name, ...observation] = rest
    if (!name || observation.length === 0) {
      process.stderr.write('usage: tutti-connector-notes add <name> <observation...>\n')
      process.exit(2)
    }
    if (!file) {
      process.stderr.write('TUTTI_CONNECTOR_DATA is not set; run me through tutti-connector-notes\n')
      process.exit(1)
    }
    fs.mkdirSync(dataDir, { recursive: true })
    fs.appendFileSync(file, `${JSON.stringify({ type: 'entity', name, entityType: 'note', observations: [observation.join(' ')] })}\n`)
    process.stdout.write(`added ${name}\n`)
    break
  }
  default:
    process.stdout.write('usage: tutti-connector-notes <list | add <name> <observation...> | --version>\n')
    process.exit(command ? 2 : 0)
}
