import { publishedUri } from './resource-uris.js'

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** A content block with the URI of its resource (`resource_link`, an embedded `resource`) as served. */
function block(key: string, item: unknown): unknown {
  if (!isObject(item)) return item
  if (item.type === 'resource_link' && typeof item.uri === 'string')
    return { ...item, uri: publishedUri(key, item.uri) ?? item.uri }
  if (item.type === 'resource' && isObject(item.resource) && typeof item.resource.uri === 'string') {
    const uri = publishedUri(key, item.resource.uri) ?? item.resource.uri
    return { ...item, resource: { ...item.resource, uri } }
  }
  return item
}

const names = (item: unknown): boolean => isObject(item) && (item.type === 'resource_link' || item.type === 'resource')

/**
 * What an upstream answered, with every resource URI in it as the connector
 * server serves it (resource-uris.ts): a client reads back through tutti
 * the links and embedded resources a tool, prompt or read gave it. The same
 * object when nothing names a resource (the common tool result: one loop
 * over its content, no copy).
 */
export function publishedContent<T extends { content?: unknown }>(key: string, result: T): T {
  const { content } = result
  if (!Array.isArray(content) || !content.some(names)) return result
  return { ...result, content: content.map((item) => block(key, item)) }
}

/** prompts/get: each message's content block. */
export function publishedMessages<T extends { messages?: unknown }>(key: string, result: T): T {
  const { messages } = result
  if (!Array.isArray(messages) || !messages.some((m) => isObject(m) && names(m.content))) return result
  return {
    ...result,
    messages: messages.map((m) => (isObject(m) && names(m.content) ? { ...m, content: block(key, m.content) } : m)),
  }
}

/** resources/read: each content's URI. */
export function publishedContents<T extends { contents?: unknown }>(key: string, result: T): T {
  const { contents } = result
  if (!Array.isArray(contents)) return result
  return {
    ...result,
    contents: contents.map((c) =>
      isObject(c) && typeof c.uri === 'string' ? { ...c, uri: publishedUri(key, c.uri) ?? c.uri } : c,
    ),
  }
}
