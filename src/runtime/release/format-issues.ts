import type { z } from 'zod'

/** `mcp.tools[0].name` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out ? `.${String(part)}` : String(part)
  }
  return out || '(root)'
}

/** One line per issue, each naming the field path and the rule it broke. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((k) => `${formatPath([...issue.path, k])}: unknown field`).join('; ')
    }
    return `${formatPath(issue.path)}: ${issue.message}`
  })
}
