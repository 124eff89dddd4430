/** Anthropic's `output_config.effort` levels, least to most. */
export const CLAUDE_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ClaudeEffort = (typeof CLAUDE_EFFORTS)[number];

/**
 * How a Claude model takes thinking. Models differ: up to Claude 4.5 it is
 * `thinking: {type: "enabled", budget_tokens}`; from 4.6 `{type:
 * "adaptive"}` with `output_config.effort`, and from Opus 4.7 on adaptive
 * is the only kind (a budget is a 400).
 */
export interface ClaudeThinkingSupport {
  /** The model thinks at all (Claude 3.5 Haiku does not: asking it to is a 400 naming `reasoning.effort`). */
  thinks: boolean;
  /** `thinking: {type: "adaptive"}` is taken (preferred where it is). */
  adaptive: boolean;
  /** The `output_config.effort` levels taken; none: the parameter is not sent. */
  efforts: readonly ClaudeEffort[];
  /** The model's ceiling for `max_tokens`, when known. */
  maxTokens: number | null;
}

/** What a budget-thinking model takes: the gateway's long-standing request shape. */
export const BUDGET_THINKING: ClaudeThinkingSupport = { thinks: true, adaptive: false, efforts: [], maxTokens: null };

/** The slice of Anthropic's Models API answer (`GET /v1/models/{id}`) read here. */
export interface ClaudeModelInfo {
  max_tokens?: number | null;
  capabilities?: {
    thinking?: { supported?: boolean; types?: { adaptive?: { supported?: boolean } | null } | null } | null;
    effort?: ({ supported?: boolean } & Partial<Record<ClaudeEffort, { supported?: boolean } | null>>) | null;
  } | null;
}

/** The support the Models API reports; null when its answer says nothing about thinking (a proxy's reduced answer). */
export function thinkingSupportOf(info: ClaudeModelInfo): ClaudeThinkingSupport | null {
  const capabilities = info.capabilities;
  if (!capabilities?.thinking) return null;
  const effort = capabilities.effort;
  return {
    thinks: capabilities.thinking.supported !== false,
    adaptive: capabilities.thinking.types?.adaptive?.supported === true,
    efforts: effort?.supported ? CLAUDE_EFFORTS.filter((level) => effort[level]?.supported === true) : [],
    maxTokens: typeof info.max_tokens === 'number' && info.max_tokens > 0 ? info.max_tokens : null,
  };
}

/**
 * The support a model's name suggests, where the Models API cannot be asked
 * (a proxy without it, Bedrock's or Vertex's names): Claude 4.6 and later
 * take adaptive thinking with the three effort levels every one of them
 * knows; older models, and names without a version, take a budget.
 */
export function thinkingSupportByName(model: string): ClaudeThinkingSupport {
  const version = claudeVersion(model);
  if (version === null || version < 4.6) return BUDGET_THINKING;
  return { thinks: true, adaptive: true, efforts: ['low', 'medium', 'high'], maxTokens: null };
}

/**
 * `claude-opus-4-7` → 4.7, `claude-3-7-sonnet-20250219` → 3.7,
 * `claude-sonnet-4-20250514` → 4 (a date is no minor version), inside
 * longer names too (`us.anthropic.claude-opus-4-7-v1:0`).
 */
function claudeVersion(model: string): number | null {
  const tokens = model.toLowerCase().split(/[^a-z0-9]+/);
  const start = tokens.indexOf('claude');
  if (start < 0) return null;
  const numbers: number[] = [];
  for (const token of tokens.slice(start + 1)) {
    if (/^\d{1,2}$/.test(token)) numbers.push(Number(token));
    else if (numbers.length > 0) break;
  }
  if (numbers.length === 0) return null;
  return numbers[0]! + (numbers[1] ?? 0) / 10;
}

/** OpenResponses' effort as the nearest level the model takes: the one asked for, else the next below, else the next above. */
export function claudeEffortFor(requested: string, supported: readonly ClaudeEffort[]): ClaudeEffort | null {
  if (supported.length === 0) return null;
  const wanted = CLAUDE_EFFORTS.indexOf(requested === 'minimal' ? 'low' : (requested as ClaudeEffort));
  if (wanted < 0) return null;
  for (let index = wanted; index >= 0; index--) if (supported.includes(CLAUDE_EFFORTS[index]!)) return CLAUDE_EFFORTS[index]!;
  return CLAUDE_EFFORTS.slice(wanted).find((level) => supported.includes(level)) ?? null;
}
