import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { readShimGeneration } from '../../src/runtime/shims/shim-on-disk.js'

// The generation a POSIX shim on disk runs, for the publisher (newest wins,
// remove only one's own) and the doctor: the launch target a symlink names,
// or the one a shell script execs; nothing for anything else.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-shim-on-disk-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

it(
  'reads the generation from a symlink to shims/<key>/g<N>.cjs, ' + 'from a shell script, and nothing from strays',
  async () => {
    const target = path.join(dir, 'shims', 'fx', 'g12.cjs')
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, '#!/usr/bin/node\n')
    const link = path.join(dir, 'link')
    fs.symlinkSync(target, link)
    expect(await readShimGeneration(link)).toBe(12)

    const script = path.join(dir, 'script')
    fs.writeFileSync(script, `#!/bin/sh\nexec '/usr/bin/node' '${target}' "$@"\n`)
    expect(await readShimGeneration(script)).toBe(12)

    const elsewhere = path.join(dir, 'elsewhere')
    fs.symlinkSync(path.join(dir, 'other', 'g3.cjs'), elsewhere)
    expect(await readShimGeneration(elsewhere)).toBeUndefined()
    const stray = path.join(dir, 'stray')
    fs.writeFileSync(stray, '#!/bin/sh\necho boo\n')
    expect(await readShimGeneration(stray)).toBeUndefined()
    expect(await readShimGeneration(path.join(dir, 'absent'))).toBeUndefined()
  },
)
