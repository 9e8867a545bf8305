import path from 'node:path'
import { z } from 'zod'

/**
 * How a connector was installed: the source as the user named it
 * (`npm:<name>[@<range>]`, or a path made absolute), the `--server` and the
 * arguments after `--` that shaped its generated manifest, and whether its
 * install scripts were allowed. `update` and an unchanged reinstall repeat
 * it; an install without it (recorded before origins were) is reinstalled
 * by hand.
 */
export const installOriginSchema = z.object({
  source: z.string(),
  /** `--key`, when it was given. */
  key: z.string().optional(),
  server: z.string().optional(),
  args: z.array(z.string()).optional(),
  allowScripts: z.boolean().optional(),
  /** A server.json npm package: the version `connector update` installed instead of the document's pin. */
  packageVersion: z.string().optional(),
})
export type InstallOrigin = z.infer<typeof installOriginSchema>

export const NPM_ORIGIN = 'npm:'

type OriginOptions = { key?: string; server?: string; args?: string[]; allowScripts?: boolean; packageVersion?: string }

export function installOrigin(source: string, options: OriginOptions): InstallOrigin {
  const origin: InstallOrigin = { source: source.startsWith(NPM_ORIGIN) ? source : path.resolve(source) }
  if (options.key !== undefined) origin.key = options.key
  if (options.server !== undefined) origin.server = options.server
  if (options.args?.length) origin.args = [...options.args]
  if (options.allowScripts) origin.allowScripts = true
  if (options.packageVersion !== undefined) origin.packageVersion = options.packageVersion
  return origin
}

/** Two installs the same way: the same source, server, arguments and consent to scripts. */
export function sameOrigin(a: InstallOrigin | undefined, b: InstallOrigin): boolean {
  if (!a) return false
  const args = (o: InstallOrigin) => JSON.stringify(o.args ?? [])
  const sameShape = a.source === b.source && a.key === b.key && a.server === b.server && args(a) === args(b)
  return sameShape && !!a.allowScripts === !!b.allowScripts && a.packageVersion === b.packageVersion
}

/** `npm:<name>[@<spec>]` split: the package name and the version, range or tag after it (absent: latest). */
export function npmOriginSpec(source: string): { name: string; spec?: string } | undefined {
  if (!source.startsWith(NPM_ORIGIN)) return undefined
  const rest = source.slice(NPM_ORIGIN.length)
  const at = rest.indexOf('@', 1)
  return at === -1 ? { name: rest } : { name: rest.slice(0, at), spec: rest.slice(at + 1) }
}
