/** What a session's tools cost the model's context before it uses any: how many, and their definitions' size. */
export interface ViewContext {
  tools: number
  /** Bytes of the tool definitions as tools/list serves them. */
  bytes: number
  /** About bytes / 4: the rough rate of English and JSON in a model's tokens. */
  tokens: number
}

/** A view's context cost, from the serialized tools it sees. */
export function viewContext(tools: ReadonlyArray<{ readonly json: string }>): ViewContext {
  let bytes = 0
  for (const tool of tools) bytes += Buffer.byteLength(tool.json)
  return { tools: tools.length, bytes, tokens: Math.round(bytes / 4) }
}
