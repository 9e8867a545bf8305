import { Flags } from '@oclif/core'

/**
 * `--connectors a,b` and `--hide-connectors c`: what a session sees, on `session prepare`, `exec` and
 * `bridge`. Together with the workspace's `.tutti/connectors.json` and the session they run inside, they
 * only ever narrow it.
 */
export const viewFlags = {
  connectors: Flags.string({
    description: 'the session sees only these connectors (comma-separated keys); narrows, never widens',
    multiple: true,
    multipleNonGreedy: true,
    delimiter: ',',
    helpValue: 'KEY,KEY',
  }),
  'hide-connectors': Flags.string({
    description: 'the session does not see these connectors (comma-separated keys)',
    multiple: true,
    multipleNonGreedy: true,
    delimiter: ',',
    helpValue: 'KEY,KEY',
  }),
  as: Flags.string({
    description:
      "the session sees this one connector under its server's own names (tools, prompts, resource URIs unprefixed)",
    helpValue: 'KEY',
  }),
}

/** The flags as prepareRuntime takes them (absent flags stay absent). */
export function viewOptions(flags: { connectors?: string[]; 'hide-connectors'?: string[]; as?: string }): {
  connectors?: string[]
  hideConnectors?: string[]
  as?: string
} {
  const trim = (keys: string[]) => keys.map((k) => k.trim()).filter((k) => k !== '')
  return {
    ...(flags.connectors ? { connectors: trim(flags.connectors) } : {}),
    ...(flags['hide-connectors'] ? { hideConnectors: trim(flags['hide-connectors']) } : {}),
    ...(flags.as !== undefined ? { as: flags.as.trim() } : {}),
  }
}
