import { expect } from 'vitest'
import { faultConnector } from './fixture-connector.js'
import { modernPost, type Binding } from './mcp-clients.js'
import { tuttiJson } from './tutti.js'

/**
 * Another user of the same daemon while an attack runs: its own session and
 * connector. `expectServing` is the round's must-hold: its tools/list
 * answers 200 with its connector's tools.
 */
export interface Bystander {
  binding: Binding
  expectServing(): Promise<void>
}

export async function bystander(stateDir: string, key = 'bystander'): Promise<Bystander> {
  await tuttiJson(stateDir, ['connector', 'install', faultConnector({ key })])
  const prepared = await tuttiJson(stateDir, ['session', 'prepare', '--provider', 'codex', '--workspace', 'bystander', '--session', key])
  const binding = prepared.mcpServers[0] as Binding
  return {
    binding,
    async expectServing() {
      const res = await modernPost(binding, 'tools/list')
      expect(res.status, res.text).toBe(200)
      const names = (res.json?.result?.tools ?? []).map((t: { name: string }) => t.name)
      expect(names).toEqual(expect.arrayContaining([`${key}_echo`, `${key}_pid`]))
    },
  }
}
