import { z } from 'zod'
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

/** Issue (or re-issue) the session token of one agent session and say where the connector server is. */
export const sessionPrepareMessage = defineMessage(
  'session-prepare',
  z.object({ provider: z.enum(SESSION_CLIENTS), workspace: id, session: id }).strict(),
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
  }),
)
