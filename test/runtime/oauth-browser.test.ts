import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { browserCommand } from '../../src/runtime/oauth/browser-opener.js'

it('the sign-in URL opens with --browser, else $BROWSER, else the OS opener found on PATH, else nothing (print only)', async () => {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'tutti-opener-'))
  const opener = path.join(bin, 'xdg-open')
  fs.writeFileSync(opener, '#!/bin/sh\n', { mode: 0o755 })
  try {
    expect(await browserCommand('firefox', { BROWSER: 'lynx', PATH: bin }, 'linux')).toBe('firefox')
    expect(await browserCommand(undefined, { BROWSER: 'lynx', PATH: bin }, 'linux')).toBe('lynx')
    expect(await browserCommand(undefined, { PATH: bin }, 'linux')).toBe(opener)
    expect(await browserCommand(undefined, { PATH: path.join(bin, 'none') }, 'linux')).toBeUndefined()
    // no opener known for the platform
    expect(await browserCommand(undefined, { PATH: bin }, 'win32')).toBeUndefined()
  } finally {
    fs.rmSync(bin, { recursive: true, force: true })
  }
})
