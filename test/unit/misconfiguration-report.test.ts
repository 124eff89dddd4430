import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { MisconfigurationReport } from '../../src/providers/misconfiguration-report.ts';

const refusal = (code: string) => new GatewayError({ status: 502, type: 'upstream_error', code, message: `refused: ${code}` });

describe('MisconfigurationReport', () => {
  it('says each kind of refusal at once, then at most once a minute with how often it was heard since; never the base URL\'s credentials; other errors not at all', () => {
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    const log = { error: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }), warn: () => {} };
    let now = 0;
    const report = new MisconfigurationReport(log, 'openai', 'https://user:secret@api.example/v1/', () => now);
    for (let index = 0; index < 500; index++) report.heard(refusal('upstream_auth_failed'));
    report.heard(refusal('upstream_not_found'));
    report.heard(refusal('upstream_rate_limited'));
    expect(lines).toEqual([
      { fields: { provider: 'openai', base_url: 'https://api.example/v1', code: 'upstream_auth_failed' }, message: 'refused: upstream_auth_failed' },
      { fields: { provider: 'openai', base_url: 'https://api.example/v1', code: 'upstream_not_found' }, message: 'refused: upstream_not_found' },
    ]);
    now = 59_999;
    report.heard(refusal('upstream_auth_failed'));
    expect(lines).toHaveLength(2);
    now = 60_000;
    report.heard(refusal('upstream_auth_failed'));
    expect(lines[2]).toEqual({ fields: { provider: 'openai', base_url: 'https://api.example/v1', code: 'upstream_auth_failed', repeated: 501 }, message: 'refused: upstream_auth_failed' });
  });
});
