import { expect } from 'vitest'
import { faultConnector } from './fixture-connector.js'
import { modernPost, type Binding } from './mcp-clients.js'
import { tuttiJson } from './tutti.js'

/** What another session saw while an attack ran: every tools/list status, and whether its tools were in each. */
export interface Watched {
  statuses: number[]
  missingTools: number
}

/**
 * Another connector and another session that must keep working while an
 * attack runs: `during(attack)` lists tools in a loop until the attack
 * settles, then once more, and reports every answer.
 */
export class Bystander {
  private constructor(
    readonly key: string,
    readonly binding: Binding,
  ) {}

  static async start(stateDir: string, key = 'bystander'): Promise<Bystander> {
    await tuttiJson(stateDir, ['connector', 'install', faultConnector({ key })])
    const prepared = await tuttiJson(stateDir, [
      'session',
      'prepare',
      '--provider',
      'codex',
      '--workspace',
      `ws-${key}`,
      '--session',
      key,
    ])
    return new Bystander(key, prepared.mcpServers[0])
  }

  /** The round's must-hold, once: its tools/list answers 200 with its connector's tools. */
  async expectServing(): Promise<void> {
    const res = await modernPost(this.binding, 'tools/list')
    expect(res.status, res.text).toBe(200)
    const names = (res.json?.result?.tools ?? []).map((t: { name: string }) => t.name)
    expect(names).toEqual(expect.arrayContaining([`${this.key}_echo`, `${this.key}_pid`]))
  }

  async during<T>(attack: Promise<T>): Promise<{ result: T; watched: Watched }> {
    const watched: Watched = { statuses: [], missingTools: 0 }
    let settled = false
    const done = attack.finally(() => {
      settled = true
    })
    const once = async () => {
      const res = await modernPost(this.binding, 'tools/list')
      watched.statuses.push(res.status)
      const names = (res.json?.result?.tools ?? []).map((t: { name: string }) => t.name)
      if (!names.includes(`${this.key}_echo`)) watched.missingTools++
    }
    const loop = (async () => {
      while (!settled) await once()
      await once()
    })()
    try {
      return { result: await done, watched }
    } finally {
      await loop
    }
  }
}
