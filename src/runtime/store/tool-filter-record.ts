import { z } from 'zod'

/**
 * A user's tool filter for one connector, as installed.json keeps it (set by
 * `connect --tools/--hide-tools/--all-tools/--always-load`): upstream names.
 * `allow` or `hide` replaces the manifest's default filter, `all` clears it
 * (every tool), and `alwaysLoad` replaces the manifest's list.
 */
const names = z.array(z.string().min(1).max(128)).max(1000)

export const storedToolFilter = z.object({
  allow: names.optional(),
  hide: names.optional(),
  all: z.literal(true).optional(),
  alwaysLoad: names.optional(),
})
export type StoredToolFilter = z.infer<typeof storedToolFilter>

/** What one `connect` asks of the filter: the tools served (one of three), and the tools always loaded. */
export interface ToolFilterChange {
  tools?: { allow: string[] } | { hide: string[] } | { all: true }
  alwaysLoad?: string[]
}

/** `current` with `change` applied; undefined when nothing is left. */
export function changedFilter(
  current: StoredToolFilter | undefined,
  change: ToolFilterChange,
): StoredToolFilter | undefined {
  const { allow: _allow, hide: _hide, all: _all, ...kept } = current ?? {}
  const next: StoredToolFilter = change.tools ? { ...change.tools, ...kept } : { ...current }
  if (change.alwaysLoad) next.alwaysLoad = change.alwaysLoad
  return Object.keys(next).length ? next : undefined
}

/** Two filters that say the same (key order aside). */
export function sameFilter(a: StoredToolFilter | undefined, b: StoredToolFilter | undefined): boolean {
  const norm = (f: StoredToolFilter | undefined) =>
    JSON.stringify(f ? [f.allow, f.hide, f.all, f.alwaysLoad] : [undefined, undefined, undefined, undefined])
  return norm(a) === norm(b)
}
