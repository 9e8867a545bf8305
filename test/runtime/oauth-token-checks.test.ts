import { expect, it } from 'vitest'
import { MAX_TOKEN_BYTES, oversizedToken } from '../../src/runtime/oauth/token-checks.js'

it('a token of MAX_TOKEN_BYTES is stored; one byte more, of either token, is refused naming it and its size', () => {
  const at = (n: number) => 'a'.repeat(n)
  expect(oversizedToken({ access_token: at(MAX_TOKEN_BYTES), refresh_token: at(MAX_TOKEN_BYTES) })).toBeUndefined()
  expect(oversizedToken({ access_token: at(MAX_TOKEN_BYTES + 1) })).toBe(
    `the authorization server issued an access_token of ${MAX_TOKEN_BYTES + 1} bytes (tutti accepts at most 16 KiB)`,
  )
  expect(oversizedToken({ access_token: 'x', refresh_token: at(MAX_TOKEN_BYTES + 1) })).toMatch(
    /^the authorization server issued a refresh_token of 16385 bytes/,
  )
  // bytes, not characters: a multi-byte token counts what goes on the wire
  expect(oversizedToken({ access_token: 'é'.repeat(MAX_TOKEN_BYTES / 2 + 1) })).toMatch(/access_token of 16386 bytes/)
})
