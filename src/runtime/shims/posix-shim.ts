/**
 * The POSIX `tutti-connector-<key>`: one `exec` of node with the launch
 * target, both by absolute path, so a CLI call costs no process beyond the
 * shell that reads it (cmd-shim's script runs sed, dirname and uname first,
 * 9-16 ms). Single quotes keep any path exactly, spaces, quotes, `$`,
 * backslashes and newlines included. A shell script rather than a shebang on
 * the target: a shebang cannot name an interpreter whose path has a space.
 */

/** `s` as one word for sh, whatever it holds. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`

export function posixShimSource(command: string, generation: number, node: string, target: string): string {
  return ['#!/bin/sh', `# ${command}, generation ${generation}: written by the tutti daemon, do not edit`, `exec ${shellQuote(node)} ${shellQuote(target)} "$@"`, ''].join('\n')
}
