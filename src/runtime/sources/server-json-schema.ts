import { z } from 'zod'

/**
 * The parts of an MCP Registry `server.json` (schema 2025-12-11) that say
 * how to run a server: packages and remotes, their arguments, environment
 * variables, headers and URL variables. Other fields are kept but unused.
 */
export const inputSchema = z.looseObject({
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  value: z.string().optional(),
  format: z.string().optional(),
})
export type ServerJsonInput = z.infer<typeof inputSchema>

const withVariables = inputSchema.extend({ variables: z.record(z.string(), inputSchema).optional() })

export const argumentSchema = z.discriminatedUnion(
  'type',
  [
    withVariables.extend({
      type: z.literal('positional'),
      valueHint: z.string().optional(),
      isRepeated: z.boolean().optional(),
    }),
    withVariables.extend({
      type: z.literal('named'),
      name: z.string().min(1, 'must not be empty'),
      isRepeated: z.boolean().optional(),
    }),
  ],
  { error: 'must have "type": "positional" or "named"' },
)
export type ServerJsonArgument = z.infer<typeof argumentSchema>

export const keyValueSchema = withVariables.extend({ name: z.string().min(1, 'must not be empty') })
export type ServerJsonKeyValue = z.infer<typeof keyValueSchema>

const transportSchema = z.looseObject({
  type: z.enum(['stdio', 'streamable-http', 'sse'], { error: 'must be "stdio", "streamable-http" or "sse"' }),
  url: z.string().optional(),
  headers: z.array(keyValueSchema).optional(),
})

export const packageSchema = z.looseObject({
  registryType: z.string().min(1, 'must not be empty'),
  identifier: z.string().min(1, 'must not be empty'),
  version: z.string().optional(),
  runtimeHint: z.string().optional(),
  runtimeArguments: z.array(argumentSchema).optional(),
  packageArguments: z.array(argumentSchema).optional(),
  environmentVariables: z.array(keyValueSchema).optional(),
  transport: transportSchema,
})
export type ServerJsonPackage = z.infer<typeof packageSchema>

export const remoteSchema = z.looseObject({
  type: z.enum(['streamable-http', 'sse'], { error: 'must be "streamable-http" or "sse"' }),
  url: z.string().min(1, 'must not be empty'),
  headers: z.array(keyValueSchema).optional(),
  variables: z.record(z.string(), inputSchema).optional(),
})
export type ServerJsonRemote = z.infer<typeof remoteSchema>

export const serverJsonSchema = z
  .looseObject({
    name: z.string().min(1, 'must not be empty'),
    description: z.string().default(''),
    title: z.string().optional(),
    version: z.string().min(1, 'must not be empty'),
    packages: z.array(packageSchema).optional(),
    remotes: z.array(remoteSchema).optional(),
  })
  .refine((s) => (s.packages?.length ?? 0) + (s.remotes?.length ?? 0) > 0, {
    message: 'names no packages and no remotes: there is no server to run',
  })
export type ServerJson = z.infer<typeof serverJsonSchema>
