import { randomFillSync } from 'node:crypto';

/** Ids drawn per refill of the random pool: one system call serves this many ids. */
const IDS_PER_REFILL = 256;
const ID_BYTES = 16;
const pool = Buffer.alloc(IDS_PER_REFILL * ID_BYTES);
let offset = pool.length;

/**
 * Opaque ids in OpenAI's style: a type prefix and 32 hex characters (128
 * random bits). Every response takes several, so they come from a pooled
 * buffer of CSPRNG bytes hex-encoded in one step: a quarter of what
 * `randomUUID()` with its dashes removed costs.
 */
export function newId(prefix: 'resp' | 'conv' | 'msg' | 'fc' | 'fco' | 'rs' | 'cmp' | 'call' | 'req' | 'mcp' | 'mcpl' | 'mcpr' | 'ctc' | 'ctco' | 'tsc' | 'tso' | 'hc'): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${prefix}_${hex}`;
}
