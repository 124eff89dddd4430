/** What responses used, summed. */
export interface UsageCounts {
  responses: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Tool calls the gateway ran (server-side executors: MCP and the like). */
  toolCalls: number;
}

/** One tenant's usage of one model on one UTC day (`YYYY-MM-DD`). */
export interface UsageRecord extends UsageCounts {
  tenant: string;
  model: string;
  day: string;
}

export interface UsageQuery {
  /** One tenant's usage, or every tenant's (null). */
  tenant: string | null;
  /** First and last UTC day, both included. */
  start: string;
  end: string;
}

/**
 * Usage accounting: what each tenant's responses used, per model and UTC
 * day, kept `retentionDays`. Records add up; a tenant's distinct models per
 * day are bounded (`MAX_MODELS_PER_DAY`), the rest counted as `other`, so a
 * client inventing model names cannot grow it without end.
 */
export interface UsageStore {
  /** Adds a finished response's usage to its tenant's day. */
  record(entry: UsageRecord): Promise<void>;
  /** The records of the range, by day, then tenant, then model. */
  read(query: UsageQuery): Promise<UsageRecord[]>;
}

export const MAX_MODELS_PER_DAY = 100;
/** Where models beyond `MAX_MODELS_PER_DAY` are counted. */
export const OTHER_MODEL = 'other';

/** Every UTC day from `start` to `end`, both included (`YYYY-MM-DD`). */
export function daysBetween(start: string, end: string): string[] {
  const days: string[] = [];
  for (let time = Date.parse(`${start}T00:00:00Z`); time <= Date.parse(`${end}T00:00:00Z`); time += 86_400_000) days.push(utcDay(time));
  return days;
}

const DAY_MS = 86_400_000;
/** The last day formatted, by its first millisecond: every response asks, and nearly all of them ask for today. */
let lastDay = { start: Number.NaN, text: '' };

/** The UTC day (`YYYY-MM-DD`) of a time in milliseconds. */
export function utcDay(time: number): string {
  const start = Math.floor(time / DAY_MS) * DAY_MS;
  if (start !== lastDay.start) lastDay = { start, text: new Date(time).toISOString().slice(0, 10) };
  return lastDay.text;
}

export function compareRecords(a: UsageRecord, b: UsageRecord): number {
  return a.day.localeCompare(b.day) || a.tenant.localeCompare(b.tenant) || a.model.localeCompare(b.model);
}
