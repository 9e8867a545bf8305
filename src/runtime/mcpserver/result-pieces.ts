import type { ToolCallResult } from '../registry/route.js'
import { fitText, measuredBytes } from './result-size.js'

/**
 * A whole tool result as resources/read serves it: its parts as resource
 * contents, in pieces of at most the cap that cut it, so that reading it
 * back does not flood the context the cap protected.
 *
 * The parts are what an agent reads best: a text block as `text/plain` (not
 * JSON-escaped inside a JSON document), an image or audio block as a blob of
 * its own MIME type, an embedded resource as its own contents; any other
 * block, and `structuredContent` with `_meta` and any other field, as
 * `application/json`. Text is split between pieces at a character boundary;
 * a blob never is (one larger than a piece is a piece of its own). Every
 * piece but the last ends with a line naming the next.
 */

export type ResourceItem =
  | { uri: string; mimeType: string; text: string }
  | { uri: string; mimeType: string; blob: string }

type Part = { mimeType: string; text: string } | { mimeType: string; blob: string }

/** A part, or a slice of a text part, in a piece. */
interface Segment {
  part: number
  start: number
  end: number
}

export interface Layout {
  readonly parts: readonly Part[]
  readonly pieces: readonly (readonly Segment[])[]
}

/** Room kept in each piece for its last line (which names the next piece). */
const NEXT_LINE_RESERVE = 256
const JSON_MIME = 'application/json'

export function partsOf(result: ToolCallResult): Part[] {
  const parts: Part[] = []
  for (const block of Array.isArray(result.content) ? result.content : []) parts.push(partOf(block))
  const rest: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(result))
    if (key !== 'content' && key !== 'isError' && value !== undefined) rest[key] = value
  if (Object.keys(rest).length) parts.push({ mimeType: JSON_MIME, text: jsonOf(rest) })
  return parts
}

/** JSON text of a part; one nested past the stack cannot be written, and says so instead of failing the read. */
function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch (err) {
    // the rest of the result is still served; this part's absence is said in its place
    return `[tutti] This part could not be written as JSON: ${(err as Error).message}`
  }
}

/** A MIME type as the upstream gave it, if it is one (a long string is not: it would crowd out the content). */
const mimeOf = (v: unknown): string | undefined => (typeof v === 'string' && v.length <= 255 ? v : undefined)

function partOf(block: unknown): Part {
  const b = (block ?? {}) as Record<string, unknown>
  const mime = mimeOf(b.mimeType)
  if (b.type === 'text' && typeof b.text === 'string') return { mimeType: 'text/plain', text: b.text }
  if ((b.type === 'image' || b.type === 'audio') && typeof b.data === 'string' && mime)
    return { mimeType: mime, blob: b.data }
  const resource = b.resource as Record<string, unknown> | undefined
  if (b.type === 'resource' && resource) {
    const mimeType = mimeOf(resource.mimeType)
    if (typeof resource.text === 'string') return { mimeType: mimeType ?? 'text/plain', text: resource.text }
    if (typeof resource.blob === 'string')
      return { mimeType: mimeType ?? 'application/octet-stream', blob: resource.blob }
  }
  return { mimeType: JSON_MIME, text: jsonOf(block) }
}

/** The pieces of `result`, each at most `pieceBytes` (result-size.ts) but for a blob larger than that. */
export function layOut(result: ToolCallResult, pieceBytes: number, uri: string): Layout {
  const parts = partsOf(result)
  const pieces: Segment[][] = [[]]
  const capacity = pieceBytes - NEXT_LINE_RESERVE - measuredBytes({ contents: [] })
  let room = capacity
  const next = () => {
    pieces.push([])
    room = capacity
  }
  // an upper bound of an item's frame: the URI of a piece numbered up to 8 digits
  const itemFrame = (mimeType: string) => measuredBytes({ uri: `${uri}/99999999`, mimeType, text: '' }) + 1
  parts.forEach((p, part) => {
    const frame = itemFrame(p.mimeType)
    if ('blob' in p) {
      const bytes = frame + p.blob.length
      if (bytes > room && pieces.at(-1)!.length) next()
      pieces.at(-1)!.push({ part, start: 0, end: p.blob.length })
      room -= bytes
      return
    }
    let start = 0
    do {
      const fit = fitText(p.text, start, room - frame)
      // nothing more fits here: the rest goes on in the next piece (an empty piece takes at least a character)
      if (fit.end === start && start < p.text.length && pieces.at(-1)!.length) {
        next()
        continue
      }
      const end = fit.end > start || start === p.text.length ? fit.end : afterCharacter(p.text, start)
      pieces.at(-1)!.push({ part, start, end })
      room -= frame + fit.bytes
      start = end
      if (start < p.text.length) next()
    } while (start < p.text.length)
  })
  return { parts, pieces }
}

function afterCharacter(text: string, i: number): number {
  const c = text.charCodeAt(i)
  const d = text.charCodeAt(i + 1)
  return c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? i + 2 : i + 1
}

/** The URI of piece `n` (1-based): the first is the result's own URI. */
export const pieceUri = (uri: string, n: number): string => (n === 1 ? uri : `${uri}/${n}`)

/** The resource contents of piece `n` (1-based), or undefined when there is no such piece. */
export function pieceOf(layout: Layout, uri: string, n: number): ResourceItem[] | undefined {
  const segments = layout.pieces[n - 1]
  if (!segments) return undefined
  const at = pieceUri(uri, n)
  const items: ResourceItem[] = segments.map(({ part, start, end }) => {
    const p = layout.parts[part]!
    return 'blob' in p
      ? { uri: at, mimeType: p.mimeType, blob: p.blob }
      : { uri: at, mimeType: p.mimeType, text: p.text.slice(start, end) }
  })
  const count = layout.pieces.length
  if (n < count) {
    const text = `[tutti] Piece ${n} of ${count} of ${uri}; the next is ${pieceUri(uri, n + 1)}.`
    items.push({ uri: at, mimeType: 'text/plain', text })
  }
  return items
}
