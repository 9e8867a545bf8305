import type { Client } from '@modelcontextprotocol/client'
import { MODERN_REVISION } from '../mcp-wire.js'
import { SURFACE_LIMITS } from '../registry/build-surface.js'
import type { UpstreamTable } from '../registry/route.js'
import type { UpstreamFeatures } from '../registry/surface.js'
import { relaysExtensionTasks } from './extension-tasks.js'

/** Pages of one list an upstream may answer in; past it, what was listed is kept. */
const MAX_PAGES = 100

type ListMethod = 'prompts/list' | 'resources/list' | 'resources/templates/list'

/** Every page of one list, up to `max` entries and MAX_PAGES pages. */
async function listAll(client: Client, method: ListMethod, field: string, max: number): Promise<unknown[]> {
  const out: unknown[] = []
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES && out.length < max; page++) {
    const result = (await client.request({ method, params: cursor ? { cursor } : {} })) as Record<string, unknown>
    const items = result[field]
    if (Array.isArray(items)) out.push(...items)
    cursor = typeof result.nextCursor === 'string' && result.nextCursor ? result.nextCursor : undefined
    if (!cursor) break
  }
  return out.slice(0, max)
}

/**
 * What an upstream serves besides its tools, as far as it declared it:
 * its prompts, resources and resource templates (every page, within the
 * surface limits), and which of its other methods tutti may relay. A list
 * that fails is served empty, and said in `problems`: the tools do not
 * depend on it.
 */
export async function listSurface(
  client: Client,
): Promise<{ surface: Omit<UpstreamTable, 'tools'>; problems: string[] }> {
  const caps = client.getServerCapabilities() ?? {}
  const features: UpstreamFeatures = {}
  const surface: Omit<UpstreamTable, 'tools'> = { features }
  const problems: string[] = []
  const list = async (method: ListMethod, field: string, max: number): Promise<never[]> => {
    try {
      return (await listAll(client, method, field, max)) as never[]
    } catch (err) {
      // told to the caller, who logs it; the other lists and the tools still serve
      problems.push(`${method} failed: ${(err as Error).message}`)
      return []
    }
  }
  if (caps.prompts) {
    features.prompts = true
    surface.prompts = await list('prompts/list', 'prompts', SURFACE_LIMITS.maxPrompts)
  }
  if (caps.resources) {
    features.resources = true
    if (caps.resources.subscribe) features.subscribe = true
    surface.resources = await list('resources/list', 'resources', SURFACE_LIMITS.maxResources)
    const max = SURFACE_LIMITS.maxResourceTemplates
    surface.resourceTemplates = await list('resources/templates/list', 'resourceTemplates', max)
  }
  if (caps.completions) features.completions = true
  if (caps.logging) features.logging = true
  // tasks: the extension (SEP-2663, extension-tasks.ts) or 2025-11-25's (SEP-1686, upstream-tasks.ts)
  if (caps.tasks?.requests?.tools?.call || relaysExtensionTasks(client)) features.tasks = true
  // a 2026-07-28 upstream lists no `execution`: whether a call makes a task is its own decision (SEP-2663)
  if (relaysExtensionTasks(client) && client.getNegotiatedProtocolVersion() === MODERN_REVISION)
    features.anyToolTasks = true
  return { surface, problems }
}
