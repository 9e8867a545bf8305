import { z } from 'zod'
import { availableResult } from './available.js'
import { defineMessage } from './message.js'

/**
 * The daemon's own view for `tutti daemon doctor`: the registry, each
 * connector's runtime facts and the `available` facade. The doctor compares
 * these with what it observes from outside (MCP in both eras, shims on
 * disk, Skill roots).
 */
const toolDifference = z.object({ tool: z.string(), problem: z.string(), fields: z.array(z.string()).optional() })

export const doctorConnector = z.object({
  key: z.string(),
  status: z.string(),
  active: z.boolean(),
  generation: z.number().int(),
  digest: z.string().optional(),
  activation: z.enum(['eager', 'lazy', 'cached']).optional(),
  hasMcp: z.boolean(),
  hasCli: z.boolean(),
  shimGeneration: z.number().int(),
  upstreamRunning: z.boolean(),
  /** Why the connector is not ready. */
  reason: z.string().optional(),
  skillsDir: z.string().optional(),
  skills: z.array(z.string()),
  declaredCheck: z.object({ checkedAt: z.string(), differences: z.array(toolDifference) }).optional(),
})
export type DoctorConnector = z.infer<typeof doctorConnector>

export const doctorTool = z.object({
  localName: z.string(),
  connector: z.string(),
  generation: z.number().int(),
  inputSchema: z.record(z.string(), z.unknown()),
  description: z.string().optional(),
})
export type DoctorTool = z.infer<typeof doctorTool>

export const doctorSnapshotMessage = defineMessage(
  'doctor-snapshot',
  z.object({}).strict(),
  z.object({ connectors: z.array(doctorConnector), tools: z.array(doctorTool), available: availableResult }),
)
