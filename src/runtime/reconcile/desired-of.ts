import type { Redactor } from '../log/redactor.js'
import { recordEnvironment } from '../install/recorded-environment.js'
import { missingCredentials, publicSettings, resolveSettings, storedSettings } from '../manifest/schema.js'
import { grantReadiness, type OAuthGrant } from '../oauth/grant-store.js'
import type { StatePaths } from '../paths.js'
import type { ListedConnector } from '../store/connector-store.js'
import { signInRequired } from '../upstream/unauthorized.js'
import { upstreamSpec, type UpstreamRecord } from '../upstream/upstream-spec.js'
import type { ConnectorSnapshot } from './connector-snapshot.js'
import { valuesDigest, type DesiredConnector } from './desired-connector.js'
import { inactiveSnapshot } from './inactive-snapshot.js'
import { learnSecretSettings, secretLearner } from './secret-upkeep.js'
import { toolFilterOf } from './tool-filter-of.js'

/** What a disabled connector's status says: how to undo it. */
export const disabledReason = (key: string): string => `switched off by the user (tutti connector enable ${key})`

/** What deciding a connector's desired state needs from the Reconciler. */
export interface DesiredContext {
  paths: StatePaths
  /** Learns the secret settings and the tokens an OAuth provider is given. */
  redactor: Redactor
  /** The generation an inactive snapshot is fenced at. */
  fence: number
  /** No auth in the manifest, but the server asked for an OAuth sign-in. */
  signInFound: boolean
  /** The daemon's auth provider found the grant unusable: reconcile again. */
  signInNeeded: () => void
}

/** What the state on disk asks of one installed connector: a desired runtime, or why it is inactive. */
export function desiredOf(
  key: string,
  entry: ListedConnector,
  grant: OAuthGrant | undefined,
  ctx: DesiredContext,
): (DesiredConnector & { needsSignIn?: string }) | { inactive: ConnectorSnapshot } {
  const { digest } = entry.installed
  // the user's switch comes first: nothing of a disabled connector runs, whatever else is true of it
  if (entry.installed.disabled) return { inactive: inactiveSnapshot(entry, 'disabled', disabledReason(key), ctx.fence) }
  if (!entry.release)
    return {
      inactive: inactiveSnapshot(
        entry,
        'failed',
        `the installed release cannot be read (reinstall it): ${entry.loadError}`,
        ctx.fence,
      ),
    }
  const missing = missingCredentials(entry.release.manifest, entry.credentials)
  if (missing.length) {
    return {
      inactive: inactiveSnapshot(
        entry,
        'needs-auth',
        `not connected: missing ${missing.join(', ')} (tutti connector connect ${key} --env ${missing[0]}=…)`,
        ctx.fence,
      ),
    }
  }
  const dataDir = ctx.paths.dataDir(key)
  const { command, environment, settings } = entry.installed
  // installs recorded before the environment was: the daemon's own, as it used to be
  const record: UpstreamRecord = { environment: environment ?? recordEnvironment(process.env) }
  if (command) record.command = command
  if (settings) record.settings = settings
  const spec = upstreamSpec(entry.release, record, entry.credentials, dataDir)
  const { manifest } = entry.release
  const resolved = resolveSettings(manifest, storedSettings(manifest, settings, entry.credentials), dataDir)
  learnSecretSettings(ctx.redactor, manifest, resolved)
  const values = valuesDigest(entry.credentials, settings)
  const { filter, view } = toolFilterOf(manifest, entry.installed.toolFilter)
  const shown = publicSettings(manifest, resolved)
  const filters = { ...(filter ? { filter } : {}), ...(view ? { toolFilter: view } : {}) }
  const desired = { release: entry.release, digest, spec, settings: shown, values, ...filters }
  const { auth } = manifest
  // no auth in the manifest, but the server asked for a sign-in (now or before: a grant is kept)
  const found = auth.kind === 'none' && (ctx.signInFound || grant !== undefined)
  if ((auth.kind !== 'oauth' && !found) || spec?.kind !== 'http') return desired
  // an OAuth connector without a usable grant is active (its CLI and Skills work) but has no upstream until `connect`
  const readiness = grantReadiness(grant, spec.url, key)
  if (!readiness.ready) {
    const reason = found && !grant?.tokens && !grant?.needsAuth ? signInRequired(key) : readiness.reason
    return { ...desired, spec: undefined, needsSignIn: reason }
  }
  const { clientId, scopes, resource } = auth.kind === 'oauth' ? auth : {}
  const asked = {
    ...(clientId ? { clientId } : {}),
    ...(scopes ? { scopes } : {}),
    ...(resource ? { resource } : {}),
  }
  const learned = secretLearner(ctx.redactor)
  spec.oauth = { stateRoot: ctx.paths.root, ...asked, needsAuth: ctx.signInNeeded, learned }
  return desired
}
