import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { makeConnector, skill } from './connector-fixture.js'
import { REPO } from './tutti.js'

/** test/fixtures/oauth/server.mjs: an authorization server, the MCP server it protects, and another one. */
export const OAUTH_FIXTURE = path.join(REPO, 'test/fixtures/oauth/server.mjs')
/** A "browser" that follows the authorization URL through its redirects. */
export const FOLLOW_BROWSER = path.join(REPO, 'test/fixtures/oauth/follow-browser.mjs')

export interface FixtureUrls {
  as: string
  mcp: string
  /** The second authorization server, which a changed resource metadata may name. */
  other: string
}

export interface OAuthFixture {
  child: ChildProcess
  urls: FixtureUrls
  /** POST <as>/control: steer the fixture (see server.mjs). */
  control(change: object): Promise<unknown>
  /** GET <as>/control: what happened. */
  stats(): Promise<any>
}

export function startOAuthFixture(env: NodeJS.ProcessEnv = {}): Promise<OAuthFixture> {
  const child = spawn(process.execPath, [OAUTH_FIXTURE], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve) =>
    child.stdout!.on('data', (d: Buffer) => {
      const urls = JSON.parse(/listening (.*)/.exec(d.toString())![1]!) as FixtureUrls
      const control = async (change: object) =>
        (await fetch(`${urls.as}/control`, { method: 'POST', body: JSON.stringify(change) })).json()
      const stats = async () => (await fetch(`${urls.as}/control`)).json()
      resolve({ child, urls, control, stats })
    }),
  )
}

/** A release of a remote connector at `url` that signs in with OAuth, with a CLI and a Skill. */
export function oauthConnector(key: string, url: string, auth: Record<string, unknown> = { kind: 'oauth' }): string {
  const manifest = {
    schemaVersion: 1,
    key,
    name: `Remote ${key}`,
    version: '1.0.0',
    auth,
    mcp: { transport: 'http', url },
  }
  return makeConnector(
    { ...manifest, cli: { entrypoint: 'bin/cli.js' }, skills: 'skills' },
    {
      'bin/cli.js': { mode: 0o755, content: '#!/usr/bin/env node\nconsole.log("remote cli works")\n' },
      'skills/remote-notes/SKILL.md': skill('remote-notes', 'Notes on the remote server'),
    },
  )
}

/** Every file under the state dir but the grant store (the one place tokens belong), daemon.log included. */
export function stateFiles(stateDir: string, into: Array<[string, string]>, d = stateDir): void {
  for (const name of fs.readdirSync(d)) {
    const p = path.join(d, name)
    const st = fs.lstatSync(p)
    if (st.isDirectory()) stateFiles(stateDir, into, p)
    else if (st.isFile() && p !== path.join(stateDir, 'oauth-grants.json')) into.push([p, fs.readFileSync(p, 'latin1')])
  }
}

/** A plain remote entry as plugins bring them (Linear, Notion, Figma): a URL and no auth at all in the manifest. */
export function plainRemoteConnector(key: string, url: string): string {
  return makeConnector({
    schemaVersion: 1,
    key,
    name: `Plain ${key}`,
    version: '1.0.0',
    mcp: { transport: 'http', url },
  })
}
