import { describe, expect, it } from 'vitest'
import { isCredential, looksLikeCredential } from '../../src/runtime/manifest/credential-names.js'

describe('credential names', () => {
  it('names that look like keys are credentials, in any case', () => {
    for (const name of [
      'GITHUB_TOKEN',
      'SLACK_BOT_TOKEN',
      'OPENAI_API_KEY',
      'DB_PASSWORD',
      'CLIENT_SECRET',
      'GITLAB_PAT',
      'GOOGLE_CREDENTIALS',
      'AUTH_HEADER',
      'tfe_token',
      'Session_Cookie',
    ]) {
      expect(looksLikeCredential(name), name).toBe(true)
    }
  })
  it('ordinary settings are not', () => {
    for (const name of [
      'ROOT_DIR',
      'MEMORY_FILE_PATH',
      'NODE_PATH',
      'PATH',
      'PATTERN',
      'REGION',
      'LOG_LEVEL',
      'SLACK_TEAM_ID',
      'PORT',
      'DEBUG',
    ]) {
      expect(looksLikeCredential(name), name).toBe(false)
    }
  })
  it('any of a mark, the name or a header makes a credential; "not secret" never hides a key name', () => {
    expect(isCredential('REGION', { markedSecret: true })).toBe(true)
    expect(isCredential('API_KEY_ID', { markedSecret: false })).toBe(true)
    expect(isCredential('REGION', { markedSecret: false })).toBe(false)
    expect(isCredential('X_TEAM', { header: true })).toBe(true)
    expect(isCredential('X_TEAM', { header: true, markedSecret: false })).toBe(true)
    expect(isCredential('REGION')).toBe(false)
  })
})
