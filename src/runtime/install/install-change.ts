import semver from 'semver'
import type { InstallResult } from '../store/connector-store.js'

/**
 * What an install did to the key, in the words a person expects: a new
 * connector, a newer or an older version, the same version rebuilt (another
 * digest: other arguments, dependencies or scripts), or nothing at all.
 */
export type InstallChange = 'installed' | 'upgraded' | 'downgraded' | 'reinstalled' | 'unchanged'

type ChangeFacts = Pick<InstallResult, 'changed' | 'version' | 'previousVersion' | 'replaced'>

export function installChange(result: ChangeFacts): InstallChange {
  if (!result.changed) return 'unchanged'
  const before = result.previousVersion
  if (before === undefined || result.replaced) return 'installed'
  const [a, b] = [semver.valid(before), semver.valid(result.version)]
  // a version semver cannot order is only compared for equality
  if (!a || !b) return before === result.version ? 'reinstalled' : 'installed'
  if (semver.eq(a, b)) return 'reinstalled'
  return semver.gt(b, a) ? 'upgraded' : 'downgraded'
}

/** `upgraded K 1.0.0 → 1.1.0`, `already installed K 1.0.0`, `installed K 1.0.0`. */
export function describeInstallChange(key: string, change: InstallChange, version: string, before?: string): string {
  if (change === 'unchanged') return `already installed ${key} ${version}`
  if ((change === 'upgraded' || change === 'downgraded') && before) return `${change} ${key} ${before} → ${version}`
  return `${change} ${key} ${version}`
}
