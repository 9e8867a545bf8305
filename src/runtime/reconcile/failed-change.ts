import type { DesiredConnector } from './desired-connector.js'

/** A change whose start failed while an earlier desired state's generation serves on: what each one is. */
export interface FailedChange {
  /** The version that serves (the earlier desired state's). */
  servingVersion: string
  /** The version that failed to start, and why. */
  version: string
  reason: string
}

/**
 * Whether the generation of `serving` may go on answering calls now that
 * the start of `wanted` failed. An upgrade (another release, a command
 * resolved again) keeps the previous release serving; a change of the
 * user's values (credentials, settings) does not: a rotated or revoked
 * credential must not go on being used, so it gets undefined.
 */
type Desired = DesiredConnector
export function keepServing(serving: Desired, wanted: Desired, reason: string): FailedChange | undefined {
  if (serving.values !== wanted.values) return undefined
  return { servingVersion: serving.release.manifest.version, version: wanted.release.manifest.version, reason }
}

/** `1.0.0 serving; 1.1.0 failed: …`, the note a ready connector's status carries while a change of it failed. */
export function servingNote(change: FailedChange): string {
  const { servingVersion, version, reason } = change
  if (servingVersion !== version) return `${servingVersion} serving; ${version} failed: ${reason}`
  return `${servingVersion} serving as before the change; its new start failed: ${reason}`
}
