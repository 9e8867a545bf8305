/**
 * The POSIX `tutti-connector-<key>`: a symlink to the launch target, whose
 * `#!` line names node by absolute path, so a CLI call costs no process but
 * node (cmd-shim's script runs sed, dirname and uname first, 9-16 ms; a
 * shell script that execs node costs the shell, ~1 ms). Where no `#!` line
 * can name node (a path with a space, or longer than the kernel reads), a
 * shell script with one `exec` of node and the target, both by absolute
 * path; single quotes keep any path exactly, spaces, quotes, `$`,
 * backslashes and newlines included.
 */

/** Linux read 127 bytes of a `#!` line before 5.1 (256 since); the line is `#!` and the path. */
const SHEBANG_PATH_MAX = 125

/** Whether a `#!` line can name `node`: one absolute word the kernel reads whole. */
export function shebangCanName(node: string, platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'win32' && node.length <= SHEBANG_PATH_MAX && /^\/\S+$/.test(node)
}

/** `s` as one word for sh, whatever it holds. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`

export function posixShimSource(command: string, generation: number, node: string, target: string): string {
  return [
    '#!/bin/sh',
    `# ${command}, generation ${generation}: written by the tutti daemon, do not edit`,
    `exec ${shellQuote(node)} ${shellQuote(target)} "$@"`,
    '',
  ].join('\n')
}
