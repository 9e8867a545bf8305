import { z } from 'zod'
import { viewLayerSchema } from './view-layer.js'
import { defineMessage } from './message.js'

export const PROVIDERS = ['codex', 'claude', 'acp', 'tutti-agent'] as const
export type Provider = (typeof PROVIDERS)[number]
/**
 * Who a session token is for: an agent of a provider, or `tutti session bridge` (a stdio client's connector server).
 */
export const SESSION_CLIENTS = [...PROVIDERS, 'bridge'] as const

const id = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .regex(/^[^\u0000-\u001f]+$/, 'must not contain control characters')

/** A session's token ends when this process is proven gone (`session exec`, `session bridge`). */
const owner = z
  .object({
    pid: z.number().int().positive(),
    start: z.string().min(1).max(64),
    pidNamespace: z.string().min(1).max(128).optional(),
  })
  .strict()

/** Issue (or re-issue) the session token of one agent session and say where the connector server is. */
export const sessionPrepareMessage = defineMessage(
  'session-prepare',
  z
    .object({
      provider: z.enum(SESSION_CLIENTS),
      workspace: id,
      session: id,
      /** The layers this preparation adds to the view (flags, the workspace's project file). */
      view: z.array(viewLayerSchema).max(16).optional(),
      /** The token of the session this one is prepared in: its view is the start, narrowed, never widened. */
      parentToken: z.string().max(256).optional(),
      /** How long the token lives; absent: the daemon's default. */
      ttlSeconds: z
        .number()
        .int()
        .positive()
        .max(10 * 365 * 24 * 3600)
        .optional(),
      owner: owner.optional(),
    })
    .strict(),
  z.object({
    token: z.string(),
    url: z.string(),
    /** Skill directories of every active connector with Skills, and the names its tools are served under. */
    skillRoots: z.array(
      z.object({
        connector: z.string(),
        dir: z.string(),
        skills: z.array(z.object({ name: z.string(), dir: z.string() })),
        releaseRoot: z.string().optional(),
        tools: z.array(z.object({ upstream: z.string(), published: z.string() })).optional(),
      }),
    ),
    /** What the session's tools cost the model's context (sessions/view-context.ts). */
    context: z.object({ tools: z.number().int(), bytes: z.number().int(), tokens: z.number().int() }),
    /** Whether a view narrows what the session sees, from which sources, and the active connectors it sees. */
    view: z.object({ narrowed: z.boolean(), sources: z.array(z.string()), connectors: z.array(z.string()) }),
    /** A narrowed session's PATH directory (its shims and `tutti`), in place of the state bin dir. */
    binDir: z.string().optional(),
  }),
)
