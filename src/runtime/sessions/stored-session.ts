import { readJsonIfExists } from '../fs/atomic-write.js'
import { expiryMs, hashToken } from './session-tokens.js'
import type { SessionRecord } from './session-record.js'

/**
 * Whether sessions.json still holds `token`'s session, unexpired: read by a
 * client with no daemon to ask (`session exec`'s watch, deciding whether a
 * daemon is worth starting again for its agent). No file holds no session
 * (the state dir is gone, say); a file it cannot read says nothing: the
 * session counts as live, and the daemon's answer decides.
 */
export async function sessionStillStored(file: string, token: string, now = Date.now()): Promise<boolean> {
  let raw: unknown
  try {
    raw = await readJsonIfExists(file)
  } catch {
    // unreadable or not JSON: no evidence either way (see above)
    return true
  }
  if (raw === undefined) return false
  const sessions = (raw as { sessions?: Record<string, SessionRecord> } | null)?.sessions
  if (!sessions || typeof sessions !== 'object') return true
  const record = sessions[hashToken(token)]
  return record !== undefined && now < expiryMs(record)
}
