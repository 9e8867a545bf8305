import { describe, expect, it } from 'vitest'
import { parseClientMessage } from '../../src/runtime/bridge/client-message.js'
import { LineSplitter } from '../../src/runtime/bridge/line-splitter.js'
import { claimedRevision, McpHeaders } from '../../src/runtime/bridge/mcp-headers.js'
import { SseParser } from '../../src/runtime/bridge/sse-parser.js'
import { decodeHeaderValue as decodeParamValue, encodeHeaderValue as headerValue } from '../../src/runtime/mcp-wire.js'

const lines = (splitter: LineSplitter, ...chunks: string[]) =>
  chunks
    .flatMap((c) => splitter.push(Buffer.from(c)))
    .map((l) => (l.kind === 'line' ? l.bytes.toString() : '<oversized>'))

describe('LineSplitter', () => {
  it('one message per line, whatever the chunks: split lines, several in a chunk, CRLF, blank lines skipped', () => {
    const s = new LineSplitter()
    expect(lines(s, '{"a":', '1}\n{"b":2}\r\n', '\n  \n{"c"', ':3}\n{"d":4}')).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ])
    expect(lines(s, '\n')).toEqual(['{"d":4}'])
  })

  it('a line over the limit is reported once and skipped to its end; the next line is read as usual', () => {
    const s = new LineSplitter(10)
    expect(lines(s, '12345', '67890ab', 'cdef', '\n{"ok":1}\n')).toEqual(['<oversized>', '{"ok":1}'])
    expect(lines(s, 'x'.repeat(11), '\n')).toEqual(['<oversized>'])
    expect(lines(s, '{"n":2}\n')).toEqual(['{"n":2}'])
  })
})

describe('SseParser', () => {
  it("each event's data as soon as it is complete; comments, event and id lines carry nothing", () => {
    const p = new SseParser()
    expect(p.push(': keepalive\n\nevent: message\nid: 1\ndata: {"a"')).toEqual([])
    expect(p.push(':1}\n')).toEqual([])
    expect(p.push('\n')).toEqual(['{"a":1}'])
    expect(p.push('data:{"b":2}\r\n\r\ndata: {"c":\ndata: 3}\n\n')).toEqual(['{"b":2}', '{"c":\n3}'])
  })

  it('a data line that arrives in many chunks is joined once', () => {
    const p = new SseParser()
    const payload = JSON.stringify({ tools: Array.from({ length: 2000 }, (_, i) => ({ name: `t${i}` })) })
    const text = `event: message\ndata: ${payload}\n\n`
    const out: string[] = []
    for (let i = 0; i < text.length; i += 977) out.push(...p.push(text.slice(i, i + 977)))
    expect(out).toEqual([payload])
  })
})

describe('parseClientMessage', () => {
  const parse = (text: string) => parseClientMessage(Buffer.from(text))

  it('requests, notifications and responses, with the bytes kept as they came', () => {
    const text = '{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{"_meta":{"progressToken":0}}}'
    expect(parse(text)).toEqual({
      kind: 'request',
      id: 0,
      method: 'tools/list',
      params: { _meta: { progressToken: 0 } },
      bytes: Buffer.from(text),
    })
    expect(parse('{"jsonrpc":"2.0","method":"notifications/initialized"}')).toMatchObject({
      kind: 'notification',
      method: 'notifications/initialized',
      params: undefined,
    })
    expect(parse('{"jsonrpc":"2.0","id":"a","result":{}}')).toMatchObject({ kind: 'response' })
  })

  it('what is not JSON-RPC gets the error that answers it, with its id when it has a usable one', () => {
    const cases: Array<[string, number, unknown]> = [
      ['nope', -32700, null],
      ['{"jsonrpc":"2.0",', -32700, null],
      ['[]', -32600, null],
      ['null', -32600, null],
      ['{"id":1,"method":"ping"}', -32600, 1],
      ['{"jsonrpc":"2.0","id":2}', -32600, 2],
      ['{"jsonrpc":"2.0","id":3,"method":""}', -32600, 3],
      ['{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, null],
      ['{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"}', -32600, 4],
    ]
    for (const [text, code, id] of cases) expect(parse(text), text).toMatchObject({ kind: 'invalid', code, id })
  })
})

describe('McpHeaders', () => {
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  }
  const request = (method: string, params?: Record<string, unknown>) => ({
    kind: 'request' as const,
    id: 1,
    method,
    params,
    bytes: Buffer.alloc(0),
  })

  it('a 2026-07-28 message gets the headers its body implies, as the SDK HTTP client sends them', () => {
    const h = new McpHeaders()
    expect(h.of(request('tools/call', { name: 'fx_echo', _meta: envelope }))).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'fx_echo',
    })
    expect(h.of(request('resources/read', { uri: 'skill://a/b/SKILL.md', _meta: envelope }))).toMatchObject({
      'mcp-name': 'skill://a/b/SKILL.md',
    })
    expect(h.of(request('server/discover', { _meta: envelope }))).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'server/discover',
    })
    expect(claimedRevision({ _meta: { progressToken: 1 } })).toBeUndefined()
  })

  it(
    'x-mcp-header properties learnt from a relayed list become Mcp-Param headers, encoded so that the daemon ' +
      'decodes them back',
    () => {
      const h = new McpHeaders()
      const list = {
        result: {
          tools: [
            {
              name: 'fx_regional',
              inputSchema: {
                type: 'object',
                properties: {
                  region: { type: 'string', 'x-mcp-header': 'Region' },
                  opts: { type: 'object', properties: { n: { type: 'integer', 'x-mcp-header': 'N' } } },
                },
              },
            },
          ],
        },
      }
      h.learn(JSON.stringify(list))
      const values = ['eu-west', ' padded ', 'ünïcode', '=?base64?abc?=', '', 'tab\there', 'line\nbreak']
      for (const region of values) {
        const headers = h.of(
          request('tools/call', { name: 'fx_regional', arguments: { region, opts: { n: 7 } }, _meta: envelope }),
        )
        expect(decodeParamValue(headers['mcp-param-Region']!), JSON.stringify(region)).toBe(region)
        expect(headers['mcp-param-N']).toBe('7')
        expect(headers['mcp-param-Region']).toMatch(/^[\t\x20-\x7e]*$/)
      }
      expect(headerValue('plain')).toBe('plain')
      // a 2025 call carries none: the 2025 era has no such headers
      expect(h.of(request('tools/call', { name: 'fx_regional', arguments: { region: 'x' } }))).toEqual({})
    },
  )

  it('a 2025 request after initialize carries the revision it settled', () => {
    const h = new McpHeaders()
    h.settleLegacy('2025-06-18')
    expect(h.of(request('tools/list'))).toEqual({ 'mcp-protocol-version': '2025-06-18' })
  })
})
