import path from 'node:path'

/**
 * Where a connector Skill's files live on the connector MCP server (the
 * SEP-2640 skills extension): `skill://<key>/<name>/<file>`. The connector
 * key is the organisational prefix (and the URI's authority), the Skill's
 * name the final segment of its skill path, as the extension requires.
 */
export const SKILL_SCHEME = 'skill://'
export const SKILL_FILE = 'SKILL.md'
export const MARKDOWN = 'text/markdown'
export const DIRECTORY = 'inode/directory'

/** The Agent Skills naming rules the extension requires of the final segment (tutti's own rule is looser). */
export const AGENT_SKILL_NAME = /^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/

/** The URI of `rel` (a `/`-separated path inside the Skill, '' for its root directory). */
export function skillUri(key: string, name: string, rel = ''): string {
  const segments = [key, name, ...(rel ? rel.split('/') : [])]
  return SKILL_SCHEME + segments.map(encodeURIComponent).join('/')
}

/**
 * The one spelling of a client's URI that `skillUri` would write, or
 * undefined when it cannot name a served file or directory: another scheme,
 * an empty, `.` or `..` segment, a trailing slash, a bad escape. Lookups go
 * through this only, so no path is ever made from a client's URI.
 */
export function canonicalSkillUri(uri: string): string | undefined {
  if (!uri.startsWith(SKILL_SCHEME)) return undefined
  const segments: string[] = []
  for (const raw of uri.slice(SKILL_SCHEME.length).split('/')) {
    let segment: string
    try {
      segment = decodeURIComponent(raw)
    } catch {
      // a malformed %-escape: not one of our URIs
      return undefined
    }
    if (segment === '' || segment === '.' || segment === '..' || segment.includes('/')) return undefined
    segments.push(segment)
  }
  return segments.length < 2 ? undefined : SKILL_SCHEME + segments.map(encodeURIComponent).join('/')
}

const BY_EXTENSION: Readonly<Record<string, string>> = {
  '.md': MARKDOWN,
  '.markdown': MARKDOWN,
  '.txt': 'text/plain',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.py': 'text/x-python',
  '.sh': 'application/x-sh',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/typescript',
  '.html': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.pdf': 'application/pdf',
}

/** By the file's extension; otherwise plain text when its bytes are UTF-8, else octet-stream. */
export function mimeTypeOf(fileName: string, utf8: boolean): string {
  return BY_EXTENSION[path.posix.extname(fileName).toLowerCase()] ?? (utf8 ? 'text/plain' : 'application/octet-stream')
}
