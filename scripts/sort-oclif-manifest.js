// `oclif manifest` lists commands in directory-listing order, which differs
// between builds; sorted, the committed file changes only when a command does.
import fs from 'node:fs'

const file = new URL('../oclif.manifest.json', import.meta.url)
const manifest = JSON.parse(fs.readFileSync(file, 'utf8'))
manifest.commands = Object.fromEntries(Object.entries(manifest.commands).sort(([a], [b]) => a.localeCompare(b)))
fs.writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`)
