import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { expect, it } from 'vitest'
import { REPO } from '../support/tutti.js'

it('runsAsMain: the file node runs, under a path with spaces and through a symlink; a module it imports is not', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti main module '))
  try {
    const check = pathToFileURL(path.join(REPO, 'dist/runtime/proc/main-module.js')).href
    fs.writeFileSync(
      path.join(dir, 'imported.mjs'),
      `import { runsAsMain } from ${JSON.stringify(check)}\nexport const imported = runsAsMain(import.meta.url)\n`,
    )
    fs.writeFileSync(
      path.join(dir, 'entry.mjs'),
      `import { runsAsMain } from ${JSON.stringify(check)}\n` +
        `import { imported } from './imported.mjs'\n` +
        `console.log(JSON.stringify({ main: runsAsMain(import.meta.url), imported }))\n`,
    )
    fs.symlinkSync(dir, `${dir} link`)
    for (const entry of [path.join(dir, 'entry.mjs'), path.join(`${dir} link`, 'entry.mjs')]) {
      expect(JSON.parse(execFileSync(process.execPath, [entry], { encoding: 'utf8' })), entry).toEqual({
        main: true,
        imported: false,
      })
    }
  } finally {
    fs.rmSync(`${dir} link`, { force: true })
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
