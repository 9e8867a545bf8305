import { z } from 'zod'
import { ENV_NAME } from './credential-names.js'

/**
 * The manifest's `mcp` section (DESIGN §5): how tutti runs or reaches the upstream MCP server, stdio or http, and the
 * tools it may declare. schema.ts puts it in the manifest and checks it against the rest.
 */

const toolDeclaration = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters'),
  title: z.string().optional(),
  description: z.string().max(8192).optional(),
  inputSchema: z.looseObject({
    type: z.literal('object', { error: 'the root of an inputSchema must be type "object"' }),
  }),
  outputSchema: z
    .looseObject({ type: z.literal('object', { error: 'the root of an outputSchema must be type "object"' }) })
    .optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
})
export type ToolDeclaration = z.infer<typeof toolDeclaration>

const declaredTools = z.array(toolDeclaration).max(1000)
const toolNames = z.array(z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters')).max(1000)

/**
 * `mcp.tools` as an object: the declarations, and the connector's default tool filter (issue 23): `allow` serves
 * only the tools it names, `hide` all but those; `alwaysLoad` marks tools for clients to load in full. A user's
 * `connect --tools/--hide-tools/--always-load` replaces them.
 */
const toolsObject = z
  .strictObject({
    declared: declaredTools.optional(),
    allow: toolNames.optional(),
    hide: toolNames.optional(),
    alwaysLoad: toolNames.optional(),
  })
  .refine((t) => !(t.allow && t.hide), { message: '"allow" and "hide" exclude each other: give one', path: ['hide'] })
export type ToolsObject = z.infer<typeof toolsObject>

/** The array form is the declarations alone; each form is parsed as itself, so an issue names its own path. */
const tools = z.unknown().transform((value, ctx): ToolDeclaration[] | ToolsObject => {
  if (!Array.isArray(value) && (typeof value !== 'object' || value === null)) {
    ctx.addIssue({ code: 'custom', message: 'must be a list of tool declarations or {"declared", "allow"|"hide"}' })
    return z.NEVER
  }
  const parsed = (Array.isArray(value) ? declaredTools : toolsObject).safeParse(value)
  if (parsed.success) return parsed.data
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue })
  return z.NEVER
})

/**
 * Absent: a stdio server is "lazy by cache" (its last tools/list publishes the route at start and the
 * first call starts it; an idle one is stopped), a remote one is eager. "eager" keeps a stdio server
 * running; "lazy" starts it on the first call, with the route from the declared `tools`.
 */
const activation = z.enum(['eager', 'lazy'], { error: 'must be "eager" or "lazy"' })

/** A day: a tool call longer than that is a job, not a call; an hour for a start (npx may fetch a package). */
export const MCP_TIMEOUT_LIMITS = { toolCallSeconds: 86_400, startupSeconds: 3_600 } as const

/** Per-connector bounds on the upstream (absent: tutti's defaults, upstream-connection.ts). */
const timeouts = z.strictObject({
  toolCallSeconds: z.number().positive('must be more than 0').max(MCP_TIMEOUT_LIMITS.toolCallSeconds).optional(),
  startupSeconds: z.number().positive('must be more than 0').max(MCP_TIMEOUT_LIMITS.startupSeconds).optional(),
})

/**
 * `mcp.maxResultBytes`: the cap on one tool result, in bytes of its JSON (absent: the daemon's,
 * mcpserver/result-caps.ts). Under 4 KiB a cut result would be mostly its note; no upstream message may be
 * over 16 MiB, so that much is as good as no cap.
 */
export const MAX_RESULT_BYTES_LIMITS = { min: 4096, max: 16 * 1024 * 1024 } as const
const maxResultBytes = z
  .number()
  .int('must be a whole number of bytes')
  .min(MAX_RESULT_BYTES_LIMITS.min, `must be at least ${MAX_RESULT_BYTES_LIMITS.min}`)
  .max(MAX_RESULT_BYTES_LIMITS.max, `must be at most ${MAX_RESULT_BYTES_LIMITS.max} (16 MiB)`)

const stdioServer = z.strictObject({
  transport: z.literal('stdio'),
  command: z.string().min(1, 'must not be empty'),
  args: z.array(z.string()).max(256).default([]),
  env: z.record(z.string().regex(ENV_NAME, 'must be an environment variable name'), z.string()).default({}),
  activation: activation.optional(),
  idleTimeoutSeconds: z.number().int().positive().optional(),
  timeouts: timeouts.optional(),
  maxResultBytes: maxResultBytes.optional(),
  tools: tools.optional(),
})

const httpServer = z.strictObject({
  transport: z.literal('http'),
  url: z
    .string()
    .url('must be an absolute http(s) URL')
    .refine((u) => /^https?:\/\//i.test(u), 'must use http or https'),
  headers: z.record(z.string().min(1), z.string()).default({}),
  activation: activation.default('eager'),
  idleTimeoutSeconds: z.number().int().positive().optional(),
  timeouts: timeouts.optional(),
  maxResultBytes: maxResultBytes.optional(),
  tools: tools.optional(),
})

/** The `mcp` section: one of the two transports. */
export const mcpServer = z.discriminatedUnion('transport', [stdioServer, httpServer], {
  error: 'transport must be "stdio" or "http"',
})

export type StdioServerSpec = z.infer<typeof stdioServer>
export type HttpServerSpec = z.infer<typeof httpServer>
export type McpServerSpec = StdioServerSpec | HttpServerSpec

/**
 * How an upstream is run: kept running, started by the first call (declared tools), or by the first call with the route
 * from its last tools/list.
 */
export type EffectiveActivation = 'eager' | 'lazy' | 'cached'

export function effectiveActivation(mcp: McpServerSpec): EffectiveActivation {
  if (mcp.activation === 'lazy') return 'lazy'
  if (mcp.activation === 'eager' || mcp.transport === 'http') return 'eager'
  return 'cached'
}

/** The declared tools of `mcp.tools`, either form. */
export function declaredToolsOf(mcp: McpServerSpec | undefined): ToolDeclaration[] | undefined {
  const t = mcp?.tools
  return Array.isArray(t) ? t : t?.declared
}

/** The manifest's default tool filter (the object form's allow/hide/alwaysLoad), if any. */
export function manifestToolFilter(mcp: McpServerSpec | undefined): Omit<ToolsObject, 'declared'> | undefined {
  const t = mcp?.tools
  if (!t || Array.isArray(t)) return undefined
  const { declared: _declared, ...filter } = t
  return Object.keys(filter).length ? filter : undefined
}

/** The manifest's cap on one result (`mcp.maxResultBytes`), as a route carries it; {} for the daemon's. */
export function resultCapOf(mcp: McpServerSpec | undefined): { maxResultBytes?: number } {
  return mcp?.maxResultBytes === undefined ? {} : { maxResultBytes: mcp.maxResultBytes }
}

/** The path of declaration `i` in the manifest, for its issues: `mcp.tools[i]` or `mcp.tools.declared[i]`. */
export function declaredToolPath(mcp: McpServerSpec, i: number): (string | number)[] {
  return Array.isArray(mcp.tools) ? ['mcp', 'tools', i] : ['mcp', 'tools', 'declared', i]
}
