import { expect, it } from 'vitest'
import { grantReadiness } from '../../src/runtime/oauth/grant-store.js'
import { LoopbackRedirect, REDIRECT_PATH } from '../../src/runtime/oauth/loopback-redirect.js'

it('the loopback redirect answers one GET at its exact path with its state; others do not count', async () => {
  const redirect = await LoopbackRedirect.listen('s1')
  try {
    expect(redirect.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+${REDIRECT_PATH}$`))
    const origin = new URL(redirect.url).origin
    expect((await fetch(`${origin}/oauth/callbackx?code=a&state=s1`)).status).toBe(404)
    expect((await fetch(`${origin}/?code=a&state=s1`)).status).toBe(404)
    // forged (any local process or page can send these): another state, none, a prefix of it, an error
    for (const query of ['code=forged&state=s2', 'code=forged', 'code=forged&state=s', 'error=access_denied&state=x']) {
      const res = await fetch(`${redirect.url}?${query}`)
      expect(res.status, query).toBe(400)
      expect(await res.text()).toMatch(/state does not match.*ignored/)
    }
    expect(redirect.ignored).toBe(4)
    expect((await fetch(`${redirect.url}?code=the-code&state=s1`)).status).toBe(200)
    // one use: a second response (a replay, another tab) is refused and changes nothing
    expect((await fetch(`${redirect.url}?code=other&state=s1`)).status).toBe(404)
    const params = await redirect.wait(5_000)
    expect(params && Object.fromEntries(params)).toEqual({ code: 'the-code', state: 's1' })
  } finally {
    await redirect.close()
  }
})

it('the redirect takes the registered port when it is free, else another', async () => {
  const first = await LoopbackRedirect.listen('s')
  const port = Number(new URL(first.url).port)
  const taken = await LoopbackRedirect.listen('s', port)
  expect(Number(new URL(taken.url).port)).not.toBe(port)
  await first.close()
  await taken.close()
  const again = await LoopbackRedirect.listen('s', port)
  expect(Number(new URL(again.url).port)).toBe(port)
  await again.close()
})

it('a redirect that never comes resolves undefined after the bound', async () => {
  const redirect = await LoopbackRedirect.listen('s')
  expect(await redirect.wait(20)).toBeUndefined()
  await redirect.close()
})

it('a grant is usable only with a token, for the same server, and with nothing asked of the user since', () => {
  const url = 'https://mcp.example.com/mcp'
  const tokens = { access_token: 'a', token_type: 'Bearer' }
  expect(grantReadiness(undefined, url, 'k')).toEqual({
    ready: false,
    reason: 'not signed in (tutti connector connect k)',
  })
  expect(grantReadiness({ serverUrl: url, tokens }, url, 'k')).toEqual({ ready: true })
  expect(grantReadiness({ serverUrl: 'https://old.example.com/mcp', tokens }, url, 'k')).toMatchObject({
    ready: false,
    reason: expect.stringContaining('signed in to https://old.example.com/mcp'),
  })
  expect(grantReadiness({ serverUrl: url, tokens, needsAuth: { reason: 'refused' } }, url, 'k')).toEqual({
    ready: false,
    reason: 'refused (tutti connector connect k)',
  })
  expect(grantReadiness({ serverUrl: url, needsAuth: { reason: 'refused' } }, url, 'k')).toEqual({
    ready: false,
    reason: 'refused (tutti connector connect k)',
  })
})
