import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { browserCommand, openBrowser } from '../../src/runtime/oauth/browser-opener.js'
import { unsafeOAuthUrl } from '../../src/runtime/oauth/oauth-endpoints.js'

it(
  'the sign-in URL opens with --browser, else $BROWSER, ' +
    'else the OS opener found on PATH, else nothing (print only)',
  async () => {
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
  },
)

it('only https: URLs, or http: on a loopback address, are opened; anything else is refused naming its scheme', () => {
  for (const ok of [
    'https://as.example.com/authorize?x=1',
    'http://127.0.0.1:9/a',
    'http://127.8.9.1/a',
    'http://[::1]:3/a',
    'http://localhost/a',
  ]) {
    expect(unsafeOAuthUrl(ok), ok).toBeUndefined()
  }
  expect(unsafeOAuthUrl('http://as.example.com/authorize')).toBe('it is plain http: and not on a loopback address')
  expect(unsafeOAuthUrl('http://127.0.0.1.evil.example/a')).toBe('it is plain http: and not on a loopback address')
  for (const [bad, scheme] of [
    ['file:///etc/passwd', 'file:'],
    ['smb://host/share', 'smb:'],
    ['vscode://ext/x', 'vscode:'],
    ['javascript:alert(1)', 'javascript:'],
  ]) {
    expect(unsafeOAuthUrl(bad!)).toBe(`its scheme ${scheme} is neither https: nor http: on a loopback address`)
    // the opener itself refuses, whoever calls it: the command is never started
    expect(() => openBrowser('/nonexistent/browser', bad!, {}, () => undefined)).toThrow(
      new RegExp(`${bad!.replace(/[/.()]/g, '\\$&')} is not opened: its scheme ${scheme}`),
    )
  }
  expect(unsafeOAuthUrl('not a url')).toBe('it is not a URL')
})
