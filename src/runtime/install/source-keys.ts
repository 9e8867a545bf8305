import { checkGivenKeys, declareGivenKeys, type GivenKey } from '../manifest/given-keys.js'
import type { PreparedSource } from '../sources/install-source.js'

/**
 * The user's keys and the source's own (header values), checked together;
 * a generated manifest declares the ones it lacks.
 */
export function declareKeys(prepared: PreparedSource, given: readonly GivenKey[] = []): GivenKey[] {
  const generated = prepared.generated
  const keys = [...given, ...(generated?.keys ?? [])]
  checkGivenKeys(keys)
  if (generated && keys.length) {
    generated.manifest = declareGivenKeys(generated.manifest, keys, String(generated.manifest.key))
  }
  return keys
}
