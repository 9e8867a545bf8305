import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { RunResult } from './tutti.js'

/**
 * Copy what `git clone` of the working tree would give: tracked files plus untracked
 * non-ignored ones (so uncommitted work is packed too), never dist/ or node_modules/.
 */
export function copyCloneOf(repo: string, dest: string): number {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  let copied = 0
  // a node_modules symlink is not matched by `node_modules/` in .gitignore; the caller links its own
  for (const rel of new Set(out.split('\0').filter((f) => f && !f.split('/').includes('node_modules')))) {
    const from = path.join(repo, rel)
    let st: fs.Stats
    try {
      st = fs.lstatSync(from)
    } catch {
      continue // tracked but deleted in the working tree: a clone of that tree would not have it
    }
    const to = path.join(dest, rel)
    fs.mkdirSync(path.dirname(to), { recursive: true })
    if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to)
    else if (st.isFile()) {
      fs.copyFileSync(from, to)
      fs.chmodSync(to, st.mode & 0o777) // keep bin/run.js executable
    } else continue
    copied++
  }
  return copied
}

/**
 * Run a program without a shell; resolves with its exit code and output, never rejects. Its stdin is closed at
 * once: `claude -p` waits 3 s for input on an open pipe before it starts. `timeout` kills a hung program.
 */
export function run(
  file: string,
  args: string[],
  options: { cwd?: string; env: NodeJS.ProcessEnv; timeout?: number },
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { cwd: options.cwd, env: options.env, maxBuffer: 64 * 1024 * 1024, timeout: options.timeout ?? 0 },
      (err, stdout, stderr) => {
        const numeric = typeof (err as { code?: unknown } | null)?.code === 'number'
        // a spawn failure (ENOENT) has no exit code: report it as exit 1 with the reason
        resolve({
          code: err ? (numeric ? (err as unknown as { code: number }).code : 1) : 0,
          stdout,
          stderr: err && !numeric ? `${stderr}${err.message}` : stderr,
        })
      },
    )
    child.stdin?.end()
  })
}

/**
 * The caller's environment without what `npm run`/vitest inject (npm_package_*, a PATH
 * holding node_modules/.bin), so npm behaves as in a user's shell. npm_config_* stays:
 * it may name the registry or cache this machine uses.
 */
export function userEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_(package|lifecycle|command|node_execpath|execpath)|INIT_CWD$|VITEST|NODE_OPTIONS$|NODE_ENV$)/.test(k))
      continue
    env[k] = v
  }
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d && !d.includes('node_modules'))
  env.PATH = [path.dirname(process.execPath), ...dirs].join(path.delimiter)
  return { ...env, ...extra }
}

/** Entries of a .tgz, without the leading `package/`. */
export function tarballEntries(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l && !l.endsWith('/'))
    .map((l) => l.replace(/^package\//, ''))
}
