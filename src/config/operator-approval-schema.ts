import { z } from 'zod';

const approvalMode = z.enum(['never', 'always', 'writes', 'destructive']);
const toolNames = z.array(z.string().min(1));

/**
 * `mcp.servers[].requireApproval`: a mode, or a mode with named exceptions
 * (the decision itself: executors/mcp/operator-approval.ts). Unlike the
 * request-side `require_approval`, a mode left out is `never`: the operator
 * says which tools wait rather than which do not.
 */
export const operatorRequireApproval = z
  .union([approvalMode, z.strictObject({ mode: approvalMode.optional(), always: toolNames.optional(), never: toolNames.optional() })])
  .describe('"never", "always", "writes" or "destructive", or { "mode": one of those, "always": [tool names], "never": [tool names] }')
  .superRefine((setting, context) => {
    if (typeof setting === 'string') return;
    const both = (setting.always ?? []).filter((name) => setting.never?.includes(name));
    if (both.length > 0) context.addIssue({ code: 'custom', message: `names ${both.map((name) => JSON.stringify(name)).join(', ')} in both "always" and "never"` });
    // A "never" list excepts tools from a mode that gates them; under the default mode nothing waits anyway.
    if ((setting.never ?? []).length > 0 && (setting.mode ?? 'never') === 'never') {
      context.addIssue({ code: 'custom', message: 'lists tools under "never" but gives no "mode" that would make them wait; add "mode": "always", "writes" or "destructive"' });
    }
  });
