import type { ToolCallResult } from '../registry/route.js'
import { fitText, grouped, measuredBytes } from './result-size.js'

/**
 * The cutting rules for a tool result over its cap (result-caps.ts decides
 * when): what is kept whole, what is cut, what is left out, and the note
 * that says so. The answer is never larger than the cap.
 *
 * - `_meta`, then `structuredContent`, are kept whole if they fit, else
 *   left out: a cut structured value would break its schema. A typed tool
 *   (one with an outputSchema) whose structuredContent was left out is
 *   marked `isError`: clients (the SDK's among them) reject a typed tool's
 *   result without structuredContent unless it is an error, and as an error
 *   the agent still reads the note.
 * - Content blocks, in order: each one that fits is kept whole; a text block
 *   (or an embedded text resource) that does not fit is cut to the room left,
 *   at a character boundary; an image, audio or any other block that does
 *   not fit is left out, never cut.
 * - Any other top-level field is left out.
 * - The note comes first, so that a client which itself keeps only the head
 *   of a long result (Claude Code does) keeps the note; the link to the
 *   whole result comes last.
 */

/** Room for the note, the link, the envelope and `isError`: the note names at most LISTED parts of each kind. */
const RESERVE = 1536
const LISTED = 4

export interface CutLink {
  uri: string
  /** How long the whole result stays readable. */
  minutes: number
}

export interface CutOptions {
  /** The cap, in bytes of the result's JSON. */
  cap: number
  /** The size of the whole result (over the cap; result-size.ts). */
  total: number
  /** The tool declares an outputSchema. */
  typed: boolean
  /** The published tool name, for the link's name. */
  tool: string
  /** Where the whole result can be read; absent when it was too large to keep. */
  link?: CutLink
  /** Why there is no link (said in the note). */
  unkept?: string
}

type Block = Record<string, unknown>

/** The result as the agent gets it: at most `cap` bytes (as result-size.ts measures). */
export function cutResult(result: ToolCallResult, options: CutOptions): ToolCallResult {
  let room = options.cap - RESERVE
  const cut: string[] = []
  const left: string[] = []
  const keepWhole = (name: string, value: unknown, label: string): boolean => {
    if (value === undefined) return false
    const bytes = measuredBytes(value) + name.length + 4
    if (bytes <= room) {
      room -= bytes
      return true
    }
    left.push(`${label} (${grouped(bytes - name.length - 4)} bytes)`)
    return false
  }
  const meta = keepWhole('_meta', result._meta, '_meta')
  const structured = keepWhole('structuredContent', result.structuredContent, 'structuredContent')
  const content: unknown[] = []
  const blocks: unknown[] = Array.isArray(result.content) ? result.content : []
  blocks.forEach((block, i) => {
    const bytes = measuredBytes(block) + 1
    if (bytes <= room) {
      content.push(block)
      room -= bytes
      return
    }
    const shortened = shorten(block as Block, room - 1)
    if (shortened) {
      content.push(shortened.block)
      room -= measuredBytes(shortened.block) + 1
      const kept = `the first ${grouped(shortened.kept)} of ${grouped(shortened.of)} bytes`
      cut.push(`content ${i + 1} (${kindOf(block)}: ${kept})`)
    } else left.push(`content ${i + 1} (${kindOf(block)}, ${grouped(bytes - 1)} bytes)`)
  })
  for (const key of Object.keys(result))
    if (!KNOWN.has(key) && result[key] !== undefined) left.push(`${key} (${grouped(measuredBytes(result[key]))} bytes)`)

  const typedError = (kept: boolean) =>
    options.typed && result.structuredContent !== undefined && !kept && result.isError !== true
  const note = noteOf(options, cut, left, typedError(structured))
  const out = assemble(result, [note, ...content], meta, structured, typedError(structured), options)
  if (measuredBytes(out) <= options.cap) return out
  // the reserve covers the note and the link by construction; should it not, the note and the link alone still fit
  const alone = noteOf(options, [], ['everything but this note'], typedError(false))
  return assemble(result, [alone], false, false, typedError(false), options)
}

const KNOWN = new Set(['_meta', 'content', 'structuredContent', 'isError'])

/** In the order of the SDK's result schema (`_meta`, `content`, `structuredContent`, `isError`): both paths' bytes. */
function assemble(
  result: ToolCallResult,
  content: unknown[],
  meta: boolean,
  structured: boolean,
  forcedError: boolean,
  options: CutOptions,
): ToolCallResult {
  const out: Record<string, unknown> = {}
  if (meta) out._meta = result._meta
  out.content = options.link ? [...content, linkOf(options.link, options.tool)] : content
  if (structured) out.structuredContent = result.structuredContent
  if (forcedError || result.isError !== undefined) out.isError = forcedError || result.isError
  return out as ToolCallResult
}

/** A resource_link, its keys in the order of the SDK's schema for it. */
function linkOf(link: CutLink, tool: string): Block {
  return {
    name: `${tool} result`,
    uri: link.uri,
    description: `The whole result of this call, readable for ${link.minutes} minutes by the session that made it`,
    type: 'resource_link',
  }
}

function kindOf(block: unknown): string {
  const type = (block as Block | null)?.type
  return typeof type === 'string' ? type.slice(0, 32) : 'unknown'
}

/** A text block, or an embedded text resource, cut to `room` bytes; undefined when nothing of it fits. */
function shorten(block: Block, room: number): { block: Block; kept: number; of: number } | undefined {
  if (!block || typeof block !== 'object') return undefined
  if (block.type === 'text' && typeof block.text === 'string') {
    const text = cutText(block.text, room - measuredBytes({ ...block, text: '' }))
    return text && { block: { ...block, text: text.kept }, kept: text.bytes, of: Buffer.byteLength(block.text) }
  }
  const resource = block.resource as Block | undefined
  if (block.type === 'resource' && resource && typeof resource.text === 'string') {
    const text = cutText(resource.text, room - measuredBytes({ ...block, resource: { ...resource, text: '' } }))
    const shortened = text && { ...block, resource: { ...resource, text: text.kept } }
    return shortened && { block: shortened, kept: text.bytes, of: Buffer.byteLength(resource.text) }
  }
  return undefined
}

function cutText(text: string, room: number): { kept: string; bytes: number } | undefined {
  if (room <= 0) return undefined
  const { end } = fitText(text, 0, room)
  if (end === 0) return undefined
  const kept = text.slice(0, end)
  return { kept, bytes: Buffer.byteLength(kept) }
}

function listed(parts: string[]): string {
  const shown = parts.slice(0, LISTED).join('; ')
  return parts.length > LISTED ? `${shown}; and ${parts.length - LISTED} more` : shown
}

function noteOf(options: CutOptions, cut: string[], left: string[], forcedError: boolean): Block {
  const lines = [
    `[tutti] This tool result is ${grouped(options.total)} bytes, over the cap of ${grouped(options.cap)} bytes ` +
      "that protects the agent's context, so it was cut.",
  ]
  if (cut.length) lines.push(`Cut: ${listed(cut)}.`)
  if (left.length) lines.push(`Left out: ${listed(left)}.`)
  if (forcedError)
    lines.push('Marked as an error because the tool declares an outputSchema and its structuredContent was left out.')
  lines.push(
    options.link
      ? `The whole result can be read for ${options.link.minutes} minutes with resources/read of ` +
          `${options.link.uri}, in pieces of at most ${grouped(options.cap)} bytes; each piece names the next.`
      : `The whole result could not be kept (${options.unkept ?? 'no session'}); ask the tool for less.`,
  )
  return { type: 'text', text: lines.join(' ') }
}
