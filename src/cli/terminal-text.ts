/**
 * Text from manifests and upstreams is printed in human tables; a raw ESC,
 * BEL or CR in it would let a connector move the cursor, clear the screen,
 * retitle the window or overwrite a line. Every C0 control, DEL and every C1
 * control (U+0080–U+009F, 8-bit CSI and friends) becomes a visible escape
 * (`\x1b`, `\r`), as do the bidi overrides that reorder what is shown.
 * JSON output never goes through here: it stays exact.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

export function terminalSafe(text: string): string {
  return text.replace(
    UNSAFE,
    (c) =>
      NAMED[c] ??
      `\\${c.charCodeAt(0) > 0xff ? 'u' : 'x'}${c
        .charCodeAt(0)
        .toString(16)
        .padStart(c.charCodeAt(0) > 0xff ? 4 : 2, '0')}`,
  )
}
