/**
 * The size of a tool result, in the unit of its cap: the bytes of its JSON,
 * each string counted as its UTF-8 bytes (JSON's escapes, such as `\n` for
 * a line break, are not counted: they are not what a model reads, and
 * counting them means serializing). The hot path asks `fitsWithin` first:
 * a bound from a walk of the value that reads no string, enough for almost
 * every result; only a result that may be near or over the cap is measured
 * (`measuredBytes`: a walk that asks each string its UTF-8 length).
 *
 * Measured this way, JSON.stringify of a string costs ~170 µs for 50 KB of
 * text with quotes and line breaks, Buffer.byteLength ~1 µs (node 20).
 */

/** Past this depth the bound gives up and the (iterative) measure decides. */
const WALK_DEPTH = 64

/** A JSON number is at most this long (`-1.2345678901234567e+308`). */
const NUMBER_BYTES = 24

/** A result measured past this is surely over any cap (and the walk stops). */
const MEASURE_LIMIT = 2 ** 31

/**
 * True when `value` surely measures at most `limit` bytes: a string of n
 * UTF-16 units has at most 3n UTF-8 bytes (a surrogate pair is 4 bytes for
 * 2 units). A result of ordinary size is settled here in well under a
 * microsecond; false means only "measure it".
 */
export function fitsWithin(value: unknown, limit: number): boolean {
  return upperBound(value, limit, 0) <= limit
}

/** An upper bound of the size of `value`, or anything over `room` once it is surely over. */
function upperBound(value: unknown, room: number, depth: number): number {
  if (typeof value === 'string') return 3 * value.length + 2
  if (value === null || typeof value !== 'object') return NUMBER_BYTES
  if (depth > WALK_DEPTH) return Number.POSITIVE_INFINITY
  let total = 2
  if (Array.isArray(value)) {
    for (const item of value) {
      total += upperBound(item, room - total, depth + 1) + 1
      if (total > room) return total
    }
    return total
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    total += 3 * key.length + 4 + upperBound(item, room - total, depth + 1)
    if (total > room) return total
  }
  return total
}

/** JSON leaves these out of an object (and writes `null` for them in an array). */
const omitted = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol'

/**
 * The size of `value`: the bytes of JSON.stringify(value) less its escapes.
 * Iterative, so a value nested past the stack is measured too.
 */
export function measuredBytes(value: unknown): number {
  if (omitted(value)) return 0
  let total = 0
  const stack: unknown[] = [value]
  while (stack.length && total <= MEASURE_LIMIT) {
    const v = stack.pop()
    if (typeof v === 'string') total += Buffer.byteLength(v) + 2
    else if (typeof v === 'number') total += Number.isFinite(v) ? String(v).length : 4
    else if (typeof v === 'boolean') total += v ? 4 : 5
    else if (v === null || typeof v !== 'object') total += 4
    else if (Array.isArray(v)) {
      total += 1 + Math.max(v.length, 1)
      for (const item of v) stack.push(omitted(item) ? null : item)
    } else {
      let keys = 0
      for (const key in v) {
        const item = (v as Record<string, unknown>)[key]
        if (omitted(item)) continue
        keys++
        total += Buffer.byteLength(key) + 3
        stack.push(item)
      }
      total += 1 + Math.max(keys, 1)
    }
  }
  return total
}

/**
 * The end (in UTF-16 units) of the longest slice of `text` from `start`
 * that takes at most `room` UTF-8 bytes, and those bytes. It never ends
 * inside a surrogate pair, so the slice is whole characters (a lone
 * surrogate counts 3 bytes, as Buffer.byteLength counts it).
 *
 * At most `room` characters fit (each is at least a byte), so one native
 * Buffer.byteLength of that slice settles ASCII text, and a few more narrow
 * any other down; a loop over characters finishes from there (a 16 MiB text
 * is laid out in pieces in ~20 ms instead of the loop's ~250 ms).
 */
export function fitText(text: string, start: number, room: number): { end: number; bytes: number } {
  let end = Math.min(text.length, start + Math.max(room, 0))
  let bytes = Buffer.byteLength(text.slice(start, end))
  for (let tries = 0; bytes > room; tries++) {
    if (tries === NARROWING_TRIES) return stepText(text, start, start, 0, room)
    end = start + Math.floor(((end - start) * room) / bytes)
    bytes = Buffer.byteLength(text.slice(start, end))
  }
  // a high surrogate at the end was counted alone: the pair is whole or not at all
  if (end > start && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) {
    end -= 1
    bytes -= 3
  }
  return stepText(text, start, end, bytes, room)
}

const NARROWING_TRIES = 8

/** From `end` (its slice `bytes` long), a character at a time while the room lasts. */
function stepText(text: string, start: number, end: number, bytes: number, room: number) {
  let used = bytes
  let i = Math.max(end, start)
  while (i < text.length) {
    const c = text.charCodeAt(i)
    let width = 1
    let cost = c < 0x80 ? 1 : c < 0x800 ? 2 : 3
    if (isHighSurrogate(c) && isLowSurrogate(text.charCodeAt(i + 1))) {
      cost = 4
      width = 2
    }
    if (used + cost > room) break
    used += cost
    i += width
  }
  return { end: i, bytes: used }
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff

/** `1234567` → `1,234,567`: the same in every locale, for notes a model reads. */
export function grouped(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}
