import { z } from 'zod'
import { ErrorCodes, TuttiError } from '../errors.js'

/**
 * Which package a connector was installed from: its kind ("npm package",
 * "Claude Code plugin", "server.json", "tutti release"…) and the name that
 * package gives itself (package.json's, plugin.json's, server.json's, or a
 * tutti release's own manifest name). A key is the connector's address, not
 * its identity: another package under a taken key must not inherit what the
 * user gave the first one (credentials, settings, an OAuth grant, data).
 */
export const sourceIdentitySchema = z.object({ kind: z.string(), name: z.string() })
export type SourceIdentity = z.infer<typeof sourceIdentitySchema>

export const RELEASE_KIND = 'tutti release'

/** npm's longest package name; a longer plugin or server name is compared by this much. */
const SOURCE_NAME_MAX = 214

export const sourceIdentity = (kind: string, name: string): SourceIdentity => ({
  kind,
  name: name.slice(0, SOURCE_NAME_MAX),
})

/**
 * What is known of the source of the connector under a key: the recorded
 * identity, or for an install recorded before identities were, what its
 * release's files show. Such a release's manifest `name` is the package's
 * own (a generated manifest takes the package, plugin or server.json name),
 * so it is compared by that name and, where its files say, by kind.
 */
export type InstalledSource =
  | { recorded: SourceIdentity }
  | { derived: { manifestName: string; kinds?: readonly string[] } }

export function sameSource(installed: InstalledSource, next: SourceIdentity, nextManifestName: string): boolean {
  if ('recorded' in installed) return installed.recorded.kind === next.kind && installed.recorded.name === next.name
  const { manifestName, kinds } = installed.derived
  return manifestName === nextManifestName && (!kinds || kinds.includes(next.kind))
}

/** `npm package "@x/gh-mcp"`: names are the package's own words, so they are quoted (and escaped) as JSON. */
export function describeSource(source: SourceIdentity | InstalledSource): string {
  if ('kind' in source) return `${source.kind} ${JSON.stringify(source.name.slice(0, 80))}`
  if ('recorded' in source) return describeSource(source.recorded)
  const { manifestName, kinds } = source.derived
  return (
    `${kinds ? kinds.join(' or ') : 'a package'} ${JSON.stringify(manifestName.slice(0, 80))} ` +
    `(installed before tutti recorded sources)`
  )
}

/** Another package under a taken key, without `--replace`: exit 2 naming both. */
export function keyTaken(key: string, installed: SourceIdentity | InstalledSource, next: SourceIdentity): TuttiError {
  const beside = next.kind === RELEASE_KIND ? '' : `, or install it beside ${key} with --key NAME`
  return new TuttiError(
    ErrorCodes.CONNECTOR_KEY_TAKEN,
    `connector "${key}" is installed from ${describeSource(installed)}, ` +
      `and this is ${describeSource(next)}: another package. ` +
      `Replace ${key} with --replace (the new one starts without its credentials, settings, OAuth grant and data, ` +
      `which are kept aside, or deleted with --purge)${beside}`,
  )
}
