import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server'
import {
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_EXTENSION_ID,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
} from '@modelcontextprotocol/server/ext/skills'
import { z } from 'zod'
import type { SessionView } from '../sessions/session-view.js'
import type { Era } from './classify.js'
import type { ResultStore } from './result-store.js'
import { BadCursorError, type Page, type SkillCatalogue } from './skill-catalogue.js'

/**
 * The SEP-2640 skills extension (`io.modelcontextprotocol/skills`) on the
 * per-request server: `skills/list`, `skills/get` and
 * `resources/directory/read` as custom methods through the SDK's 3-argument
 * `setRequestHandler`, and the base `resources/*` methods that serve the
 * Skills' files. The SDK's own SkillsExtension attaches to an McpServer,
 * which would own resources/* and the capability; this server is the
 * low-level one, built per request, so the catalogue is served directly.
 */

/** `directoryRead`: resources/directory/read is served (a Skill's `references/`, `templates/`…). */
export const SKILLS_CAPABILITY = { extensions: { [SKILLS_EXTENSION_ID]: { directoryRead: true } } }

/**
 * The 2026-07-28 cache attributes (CacheableResult), as tools/list has
 * them: a change is announced on listen streams, so nothing is cached.
 */
const CACHE = { ttlMs: 0, cacheScope: 'private' as const }

const cursorParams = z.looseObject({ cursor: z.string().optional() }).optional()
const uriParams = z.looseObject({ uri: z.string() })
const directoryParams = z.looseObject({ uri: z.string(), cursor: z.string().optional() })

const invalid = (message: string, data?: unknown): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, message, data)

/** A cursor this server never handed out is the client's error. */
async function paged<R>(work: () => Promise<R>): Promise<R> {
  try {
    return await work()
  } catch (err) {
    if (err instanceof BadCursorError) throw invalid(err.message)
    throw err
  }
}

const cursorOf = (page: Page<unknown>): { nextCursor?: string } =>
  page.nextCursor ? { nextCursor: page.nextCursor } : {}

/**
 * Every answer is of the Skills `view` sees: another connector's Skill is not found, as if it were not there.
 * resources/read also serves the whole results of cut tool calls (result-store.ts) to the session that made them.
 */
export function serveSkills(
  server: Server,
  catalogue: SkillCatalogue,
  era: Era | undefined,
  view: SessionView,
  stored?: { results: ResultStore; session: string },
): void {
  // the extension defines them from 2026-07-28; the SDK fills them in for the base methods itself
  const cache = era === 'modern' ? { resultType: 'complete', ...CACHE } : {}

  server.setRequestHandler(SKILLS_LIST_METHOD, { params: cursorParams }, async (params) => {
    const page = await paged(() => catalogue.list(params?.cursor, view))
    return { skills: page.items, ...cursorOf(page), ...cache }
  })

  server.setRequestHandler(SKILLS_GET_METHOD, { params: uriParams }, async ({ uri }) => {
    const skill = await catalogue.get(uri, view)
    if (!skill) throw invalid(`No skill is served at ${uri}`, { uri })
    // a single entry: no cursor
    return { skill, ...cache }
  })

  server.setRequestHandler(RESOURCES_DIRECTORY_READ_METHOD, { params: directoryParams }, async ({ uri, cursor }) => {
    const page = await paged(() => catalogue.directory(uri, cursor, view))
    if (!page) throw invalid(`${uri} is not a directory resource`, { uri })
    return { resources: page.items, ...cursorOf(page), ...cache }
  })

  server.setRequestHandler('resources/list', async (req) => {
    const page = await paged(() => catalogue.resources(req.params?.cursor, view))
    return { resources: page.items, ...cursorOf(page) }
  })
  server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [] }))
  server.setRequestHandler('resources/read', async (req) => {
    const { uri } = req.params
    const result = stored?.results.read(uri, stored.session)
    if (result) return result
    const content = await catalogue.read(uri, view).catch((err: unknown) => {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `${uri} cannot be served: ${(err as Error).message}`, {
        uri,
      })
    })
    if (!content) throw invalid(`resource not found: ${uri}`, { uri })
    return { contents: [content] }
  })
}
