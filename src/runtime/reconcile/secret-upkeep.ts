import type { Redactor } from '../log/redactor.js'
import type { ConnectorManifest } from '../manifest/schema.js'
import { secretSettingNames } from '../manifest/schema.js'
import { grantSecrets, type OAuthGrant } from '../oauth/grant-store.js'

/*
 * The redactor learns every value that must never be printed, before anything could print it:
 * stored credentials and grant tokens (also of a connector that is not active yet), secret
 * settings once resolved, and tokens an OAuth refresh brings.
 */

export function learnStoredSecrets(redactor: Redactor, credentials: Record<string, string>, grant?: OAuthGrant): void {
  for (const value of [...Object.values(credentials), ...grantSecrets(grant)]) redactor.addSecret(value)
}

/** A secret setting is never shown; one still in installed.json (an older install) is redacted as well. */
export function learnSecretSettings(redactor: Redactor, manifest: ConnectorManifest, resolved: Record<string, string>) {
  for (const name of secretSettingNames(manifest)) redactor.addSecret(resolved[name])
}

/** For an OAuth provider: the tokens it is given later. */
export const secretLearner =
  (redactor: Redactor) =>
  (secrets: string[]): void => {
    for (const value of secrets) redactor.addSecret(value)
  }
