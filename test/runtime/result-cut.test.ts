import { isCallToolResult } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { cutResult, type CutOptions } from '../../src/runtime/mcpserver/result-cut.js'
import { fitsWithin, fitText, measuredBytes } from '../../src/runtime/mcpserver/result-size.js'
import type { ToolCallResult } from '../../src/runtime/registry/route.js'

const LINK = { uri: 'tutti://results/AAAAAAAAAAAAAAAAAAAAAA', minutes: 15 }
const text = (t: string) => ({ type: 'text', text: t })
const image = (bytes: number) => ({
  type: 'image',
  data: Buffer.alloc(bytes, 1).toString('base64'),
  mimeType: 'image/png',
})

function cut(result: ToolCallResult, options: Partial<CutOptions> = {}) {
  const cap = options.cap ?? 4096
  const out = cutResult(result, {
    cap,
    total: measuredBytes(result),
    typed: false,
    tool: 'k_t',
    link: LINK,
    ...options,
  })
  // never over the cap, and a valid CallToolResult
  expect(measuredBytes(out)).toBeLessThanOrEqual(cap)
  expect(isCallToolResult(out)).toBe(true)
  const content = out.content as Array<Record<string, any>>
  return { out, content, note: content[0]!.text as string, rest: content.slice(1) }
}

describe('the size bound', () => {
  const samples: unknown[] = [
    'plain',
    '\u0000\u0001\u001f control',
    '"quoted" \\ back',
    'é中😀 mixed',
    '\ud800 lone \udc00 surrogates',
    '\u2028\u2029',
    { a: [1, 2.5e300, -0, null, true, false, { b: 'c' }], 'ké"y': 'v' },
    [[[[]]]],
  ]
  it.each(samples)('%j: measured as its JSON without escapes; the bound never below it', (value) => {
    const bytes = measuredBytes(value)
    expect(bytes).toBeLessThanOrEqual(Buffer.byteLength(JSON.stringify(value)))
    // JSON writes a backslash only for an escape: without one, the two agree
    if (!JSON.stringify(value).includes('\\')) expect(bytes).toBe(Buffer.byteLength(JSON.stringify(value)))
    for (let limit = 0; limit <= bytes + 4; limit++)
      if (fitsWithin(value, limit)) expect(bytes).toBeLessThanOrEqual(limit)
  })

  it('a plain value measures exactly as its JSON', () => {
    const value = {
      a: [1, 2.5e300, -0, null, true, false, { b: 'c', u: undefined }, undefined],
      é: 'ü中😀',
      e: [],
      o: {},
    }
    expect(measuredBytes(value)).toBe(Buffer.byteLength(JSON.stringify(value)))
  })

  it('an ordinary result is settled by the bound, without serializing', () => {
    const result = { content: [text('x'.repeat(10_000))], structuredContent: { n: [1, 2, 3] } }
    expect(fitsWithin(result, 100_000)).toBe(true)
    expect(fitsWithin(result, 10_000)).toBe(false)
  })

  it('a value nested past the walk is left to the exact measure', () => {
    let v: unknown = 'bottom'
    for (let i = 0; i < 10_000; i++) v = { v }
    expect(fitsWithin(v, 1e9)).toBe(false)
  })
})

describe('fitText: a prefix of whole characters within the room', () => {
  const mixed = 'aé中😀"\n\u0001\ud800b'.repeat(3)
  it.each([0, 1, 2, 3, 5, 7, 11, 19, 40, 200])('room %i', (room) => {
    for (let start = 0; start < mixed.length; start += 3) {
      const { end, bytes } = fitText(mixed, start, room)
      const slice = mixed.slice(start, end)
      expect(Buffer.byteLength(slice)).toBe(bytes)
      expect(bytes).toBeLessThanOrEqual(room)
      // no surrogate pair split: the slice does not end in a high surrogate that had its low one next
      const last = slice.charCodeAt(slice.length - 1)
      if (last >= 0xd800 && last <= 0xdbff) expect(mixed.charCodeAt(end)).not.toBe(0xde00)
      // the longest: one more character would not fit
      if (end < mixed.length) {
        const next = mixed.codePointAt(end)! > 0xffff ? end + 2 : end + 1
        expect(Buffer.byteLength(mixed.slice(start, next))).toBeGreaterThan(room)
      }
    }
  })
})

describe('fitText against a character-by-character reference', () => {
  /** The plain loop fitText's native narrowing must agree with. */
  function reference(text: string, start: number, room: number): { end: number; bytes: number } {
    let i = start
    let used = 0
    while (i < text.length) {
      const pair = /[\ud800-\udbff][\udc00-\udfff]/.test(text.slice(i, i + 2))
      const cost = Buffer.byteLength(text.slice(i, i + (pair ? 2 : 1)))
      if (used + cost > room) break
      used += cost
      i += pair ? 2 : 1
    }
    return { end: i, bytes: used }
  }
  const alphabet = ['a', ' ', '\n', 'é', 'ß', '中', '€', '😀', '𝄞', '\ud800', '\udc00']
  let seed = 42
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed % n
  }
  it('random texts, starts and rooms, including runs of one kind of character', () => {
    for (let round = 0; round < 400; round++) {
      const run = random(3) === 0
      const length = random(300)
      let text = ''
      for (let i = 0; i < length; i++) text += alphabet[run ? round % alphabet.length : random(alphabet.length)]
      const start = random(text.length + 1)
      const room = random(900)
      expect(fitText(text, start, room), JSON.stringify({ text, start, room })).toEqual(reference(text, start, room))
    }
  })
})

describe('cutResult', () => {
  it('text is cut at a character boundary, the note first, the link last', () => {
    const long = 'é中😀'.repeat(2000)
    const { content, note, rest } = cut({ content: [text(long)] })
    const kept = rest[0]!.text as string
    expect(long.startsWith(kept)).toBe(true)
    expect(kept.length).toBeGreaterThan(600)
    // whole characters: it survives a UTF-8 round trip, and ends at the end of an emoji
    expect(Buffer.from(kept, 'utf8').toString('utf8')).toBe(kept)
    const last = kept.charCodeAt(kept.length - 1)
    expect(last >= 0xd800 && last <= 0xdbff).toBe(false)
    expect(note).toMatch(/^\[tutti\] This tool result is [\d,]+ bytes, over the cap of 4,096 bytes .* so it was cut\./)
    expect(note).toContain(
      `Cut: content 1 (text: the first ${Buffer.byteLength(kept).toLocaleString('en')} of 18,000 bytes).`,
    )
    expect(note).toContain(`resources/read of ${LINK.uri}, in pieces of at most 4,096 bytes`)
    expect(content.at(-1)).toEqual({
      name: 'k_t result',
      uri: LINK.uri,
      description: 'The whole result of this call, readable for 15 minutes by the session that made it',
      type: 'resource_link',
    })
  })

  it('images are kept whole or left out, never cut; later blocks still get the room', () => {
    const small = image(300)
    const big = image(5000)
    const { content, note } = cut({ content: [text('before'), big, small, text('after')] })
    expect(content.slice(1, -1)).toEqual([text('before'), small, text('after')])
    expect(note).toContain(`Left out: content 2 (image, ${measuredBytes(big).toLocaleString('en')} bytes).`)
    expect(note).not.toContain('Cut:')
  })

  it('an embedded text resource is cut like text; a blob resource is left out', () => {
    const resource = {
      type: 'resource',
      resource: { uri: 'file:///a', mimeType: 'text/plain', text: 'r'.repeat(9000) },
    }
    const blob = { type: 'resource', resource: { uri: 'file:///b', blob: Buffer.alloc(9000).toString('base64') } }
    const { rest, note } = cut({ content: [blob, resource] })
    expect(rest[0]).toMatchObject({ type: 'resource', resource: { uri: 'file:///a', mimeType: 'text/plain' } })
    expect(resource.resource.text.startsWith(rest[0]!.resource.text)).toBe(true)
    expect(note).toMatch(
      /Cut: content 2 \(resource: the first [\d,]+ of 9,000 bytes\)\. Left out: content 1 \(resource/,
    )
  })

  it('structuredContent that fits is kept whole, beside the cut text', () => {
    const { out, rest } = cut({ content: [text('t'.repeat(9000))], structuredContent: { n: 42 } }, { typed: true })
    expect(out.structuredContent).toEqual({ n: 42 })
    expect(out.isError).toBeUndefined()
    expect(rest[0]!.text.length).toBeGreaterThan(1000)
  })

  it('structuredContent over the cap is left out whole; a typed tool’s result becomes an error', () => {
    const items = Array.from({ length: 500 }, (_, i) => `item ${i}`)
    const result = { content: [text(JSON.stringify({ items }))], structuredContent: { items } }
    const typed = cut(result, { typed: true })
    expect(typed.out.structuredContent).toBeUndefined()
    expect(typed.out.isError).toBe(true)
    expect(typed.note).toMatch(/Left out: structuredContent \([\d,]+ bytes\)\./)
    expect(typed.note).toContain('Marked as an error because the tool declares an outputSchema')
    const untyped = cut(result, { typed: false })
    expect(untyped.out.structuredContent).toBeUndefined()
    expect(untyped.out.isError).toBeUndefined()
    expect(untyped.note).not.toContain('Marked as an error')
    // an error already: it stays one, and nothing is said about it
    const failed = cut({ ...result, isError: true }, { typed: true })
    expect(failed.out.isError).toBe(true)
    expect(failed.note).not.toContain('Marked as an error')
  })

  it('keys in the order of the SDK’s schema; _meta kept when it fits; other fields left out and named', () => {
    const result = { _meta: { trace: 'abc' }, content: [text('x'.repeat(9000))], isError: false, extra: 'e'.repeat(50) }
    const { out, note } = cut(result)
    expect(Object.keys(out)).toEqual(['_meta', 'content', 'isError'])
    expect(out._meta).toEqual({ trace: 'abc' })
    expect(note).toContain('extra (52 bytes)')
  })

  it('without a link the note says the whole result could not be kept', () => {
    const { content, note } = cut({ content: [text('x'.repeat(9000))] }, { link: undefined, unkept: 'no session' })
    expect(content.at(-1)!.type).toBe('text')
    expect(note).toContain('The whole result could not be kept (no session); ask the tool for less.')
  })

  it('many parts: the note lists four of each kind and counts the rest', () => {
    const blocks = Array.from({ length: 12 }, () => image(3000))
    const { note } = cut({ content: blocks })
    expect(note).toMatch(
      /Left out: (content \d \(image, 4,049 bytes\); ){3}content 4 \(image, 4,049 bytes\); and 8 more\./,
    )
    expect(measuredBytes(blocks[0])).toBe(4049)
  })

  it('the smallest cap still holds a note and a link (and never more than the cap)', () => {
    const { content } = cut({ content: [text('x'.repeat(100_000)), image(10_000)] }, { cap: 4096 })
    expect(content[0]!.type).toBe('text')
    expect(content.at(-1)!.type).toBe('resource_link')
  })
})
