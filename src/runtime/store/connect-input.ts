import { ErrorCodes, TuttiError } from '../errors.js'
import { declareHint } from './secret-settings.js'

/**
 * What `connect` is given, checked against what the manifest declares before anything is written: a credential is
 * a declared auth variable or secret setting and is not empty, a setting is declared config. A name of the other kind
 * is told which flag it needs.
 */
export function checkConnectInput(
  key: string,
  input: { credentials: Readonly<Record<string, string>>; settings: Readonly<Record<string, string>> },
  declared: readonly string[],
  declaredSettings: readonly string[],
  secretSettings: readonly string[],
): void {
  for (const [name, value] of Object.entries(input.credentials)) {
    if (!declared.includes(name) && !secretSettings.includes(name)) {
      const none = ' (it declares none: auth.kind is "none")'
      const list = declared.length ? ` (declared: ${declared.join(', ')})` : none
      const hint = declaredSettings.includes(name)
        ? `; ${name} is a setting: use --set ${name}=VALUE`
        : `${list}${declareHint(name, 'credential')}`
      throw new TuttiError(
        ErrorCodes.CREDENTIAL_INVALID,
        `connector "${key}" does not declare the credential ${name}${hint}`,
      )
    }
    if (value === '') throw new TuttiError(ErrorCodes.CREDENTIAL_INVALID, `the value for ${name} is empty`)
  }
  for (const name of Object.keys(input.settings)) {
    if (!declaredSettings.includes(name)) {
      const none = ' (it declares no config)'
      const list = declaredSettings.length ? ` (declared: ${declaredSettings.join(', ')})` : none
      const hint = declared.includes(name)
        ? `; ${name} is a credential: use --env ${name}=VALUE or --from-env ${name}`
        : `${list}${declareHint(name, 'setting')}`
      throw new TuttiError(
        ErrorCodes.ARGUMENT_INVALID,
        `connector "${key}" does not declare the setting ${name}${hint}`,
      )
    }
  }
}
