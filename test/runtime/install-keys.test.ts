import { describe, expect, it } from 'vitest'
import { checkGivenKeys, declareGivenKeys, type GivenKey } from '../../src/runtime/manifest/given-keys.js'
import { urlKey } from '../../src/runtime/sources/url-source.js'
import { missingVariableHint, missingVariables } from '../../src/runtime/upstream/missing-variable.js'

const given = (name: string, value = 'v', secret = false): GivenKey => ({
  name,
  value,
  secret,
  flag: secret ? '--secret' : '--env',
})

describe('the key of a URL source', () => {
  it.each([
    ['https://mcp.linear.app/mcp', 'linear'],
    ['https://mcp.notion.com/mcp', 'notion'],
    ['https://api.githubcopilot.com/mcp/', 'githubcopilot'],
    ['https://bindings.mcp.cloudflare.com/sse', 'cloudflare'],
    ['https://mcp.example.co.uk/mcp', 'example'],
    ['http://localhost:3000/mcp', 'localhost'],
  ])('%s is %s', (url, key) => expect(urlKey(new URL(url))).toBe(key))

  it('an IP address needs --key', () => {
    expect(() => urlKey(new URL('http://127.0.0.1:8080/mcp'))).toThrow(/choose its key with --key NAME/)
    expect(urlKey(new URL('http://127.0.0.1:8080/mcp'), 'local')).toBe('local')
  })
})

describe('given keys on a generated manifest', () => {
  const manifest = { schemaVersion: 1, key: 'k', mcp: { transport: 'stdio', command: 'x', env: { MODE: 'literal' } } }

  it('a credential-like or --secret name becomes a secret auth variable, anything else a setting', () => {
    const keys = [given('API_TOKEN'), given('TEAM_ID'), given('SIGNING', 'v', true), given('MODE')]
    const out = declareGivenKeys(manifest, keys, 'k')
    const variables = [
      { name: 'API_TOKEN', secret: true },
      { name: 'SIGNING', secret: true },
    ]
    expect(out.auth).toEqual({ kind: 'env', variables })
    expect(out.config).toEqual([{ name: 'TEAM_ID' }, { name: 'MODE' }])
    // the source's literal gives way to the user's value
    expect((out.mcp as { env: Record<string, string> }).env).toEqual({ MODE: '${MODE}' })
    expect(manifest.mcp.env).toEqual({ MODE: 'literal' })
  })

  it('an OAuth connector takes no other credential', () => {
    const oauth = { ...manifest, auth: { kind: 'oauth' } }
    expect(() => declareGivenKeys(oauth, [given('API_TOKEN')], 'k')).toThrow(/signs in with OAuth/)
  })

  it('bad names, reserved names, empty values and repeats are refused naming them', () => {
    expect(() => checkGivenKeys([given('9LIVES')])).toThrow('--env "9LIVES": not an environment variable name')
    expect(() => checkGivenKeys([given('TUTTI_X')])).toThrow('--env TUTTI_X: names starting with TUTTI_')
    expect(() => checkGivenKeys([given('A', '')])).toThrow('--env A: the value is empty')
    expect(() => checkGivenKeys([given('A'), given('A', 'w', true)])).toThrow('A is given twice (--env, --secret)')
  })
})

describe('a missing variable on stderr', () => {
  it.each([
    ['Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID environment variables', ['SLACK_BOT_TOKEN', 'SLACK_TEAM_ID']],
    ['GITHUB_PERSONAL_ACCESS_TOKEN environment variable is not set', ['GITHUB_PERSONAL_ACCESS_TOKEN']],
    ['Error: Missing required environment variable: BRAVE_API_KEY', ['BRAVE_API_KEY']],
    ['Error: Cannot find module /x/NODE_MODULES_CACHE', []],
    ['listening on stdio; LOG_LEVEL=debug', []],
  ])('%s', (line, names) => expect(missingVariables(`noise\n${line}\n    at main (file.js:1:1)`)).toEqual(names))

  it('the hint names connect with --env, and --secret for a credential', () => {
    expect(missingVariableHint('gh', 'Please set GITHUB_TOKEN and GITHUB_ORG_NAME')).toBe(
      '; run tutti connector connect gh --env GITHUB_TOKEN=… --env GITHUB_ORG_NAME=… (or --secret GITHUB_TOKEN)',
    )
    expect(missingVariableHint('gh', 'all good')).toBe('')
  })
})
