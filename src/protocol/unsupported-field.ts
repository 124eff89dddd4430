import type { z } from 'zod';

/**
 * A nested field OpenAI defines whose meaning this gateway cannot give:
 * accepted where `servable` says its value asks for nothing the gateway lacks
 * (unset, null, the default), otherwise a 400 `unsupported_parameter` naming
 * it (parse-request.ts words it), so a client never believes it was honoured.
 */
export function refusedUnless<T extends z.ZodType>(schema: T, servable: (value: NonNullable<z.output<T>>) => boolean, why: string): T {
  return schema.superRefine((value, context) => {
    if (value === undefined || value === null || servable(value as NonNullable<z.output<T>>)) return;
    context.addIssue({ code: 'custom', message: why, params: { code: 'unsupported_parameter' } });
  }) as unknown as T;
}
