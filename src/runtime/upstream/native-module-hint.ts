/**
 * A server that dies because a native module of its dependencies was never
 * built (npm ran with --ignore-scripts) prints a path list, a loader error or
 * a node-gyp line; its last lines say nothing a user can act on. These are
 * the messages of the loaders people use (bindings, node-gyp-build,
 * prebuild-install, a plain require of a `.node` file) and of an ABI
 * mismatch.
 */
const UNBUILT: ReadonlyArray<{ pattern: RegExp; what: string }> = [
  { pattern: /Could not locate the bindings file/, what: 'Could not locate the bindings file' },
  { pattern: /No native build was found for [^\n]*/, what: '' },
  { pattern: /Cannot find module '[^'\n]*\.node'/, what: '' },
  { pattern: /[^\s'"]+\.node: (?:cannot open shared object file|invalid ELF header)[^\n]*/, what: '' },
  { pattern: /was compiled against a different Node\.js version/, what: 'built for another Node.js version' },
  { pattern: /gyp (?:ERR!|info)[^\n]*/, what: '' },
  // the list of paths bindings tried, when its heading is no longer in the kept tail of stderr
  { pattern: /(?:→ |')\/[^'\n]*\/([^/'\n]+\.node)'?,?\s*$/m, what: 'no built .node file found' },
]

/** Longest quote of the loader's line in a one-line reason. */
const QUOTE_MAX = 160

/** The reason for such a crash, naming `--allow-scripts`; undefined when stderr shows no unbuilt native module. */
export function nativeModuleHint(stderr: string): string | undefined {
  for (const { pattern, what } of UNBUILT) {
    const match = pattern.exec(stderr)
    if (!match) continue
    const quote = (what || match[0]).trim().slice(0, QUOTE_MAX)
    return (
      `a native module is not built (${quote}): its install scripts did not run; ` +
      'install the connector again with --allow-scripts to build it'
    )
  }
  return undefined
}
