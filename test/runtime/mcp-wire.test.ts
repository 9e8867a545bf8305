import * as client from '@modelcontextprotocol/client'
import * as server from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import { LEGACY_REVISION, META, MODERN_REVISION, TOLERATED_LEGACY_REVISIONS } from '../../src/runtime/mcp-wire.js'

/*
 * mcp-wire.ts spells MCP's names without importing the SDK (the pure core uses it). Where the SDK
 * exports the same name, both SDK packages must agree with it, so that an SDK upgrade that renames
 * one fails here and not in a client's parser.
 */
describe('the MCP wire names match the SDK', () => {
  for (const sdk of [server, client]) {
    it(`_meta keys (${sdk === server ? 'server' : 'client'})`, () => {
      expect(META).toMatchObject({
        protocolVersion: sdk.PROTOCOL_VERSION_META_KEY,
        clientCapabilities: sdk.CLIENT_CAPABILITIES_META_KEY,
        clientInfo: sdk.CLIENT_INFO_META_KEY,
        serverInfo: sdk.SERVER_INFO_META_KEY,
        relatedTask: sdk.RELATED_TASK_META_KEY,
        subscriptionId: sdk.SUBSCRIPTION_ID_META_KEY,
      })
    })
    it(`every 2025 revision served is one the SDK supports (${sdk === server ? 'server' : 'client'})`, () => {
      // 2026-07-28 is not in this list: the SDK negotiates it apart (versionNegotiation)
      expect(sdk.SUPPORTED_PROTOCOL_VERSIONS).toEqual(
        expect.arrayContaining([LEGACY_REVISION, ...TOLERATED_LEGACY_REVISIONS]),
      )
      expect(sdk.SUPPORTED_PROTOCOL_VERSIONS).not.toContain(MODERN_REVISION)
    })
  }
})
