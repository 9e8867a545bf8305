/**
 * What an agent host needs to start one agent session with connectors
 * (seed §7.1): the environment, the one authoritative `mcpServers` list and
 * the Skill roots. Every provider projection is derived from this value.
 */
export interface MCPServerBinding {
  name: 'connector'
  type: 'http'
  url: string
  headers: Record<string, string>
}

export interface SkillRoot {
  connector: string
  dir: string
}

export interface PreparedRuntime {
  provider: string
  workspace: string
  session: string
  env: Record<string, string>
  mcpServers: MCPServerBinding[]
  skillRoots: SkillRoot[]
}

export const TOKEN_ENV = 'TUTTI_CONNECTOR_TOKEN'
