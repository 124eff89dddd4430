import { lookup as dnsLookup } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressRefusalIn, EgressPolicy, EgressRefused } from '../../src/executors/mcp/egress-policy.ts';
import { canonicalHref } from '../../src/util/canonical-url.ts';

/** A resolver that knows one name more than the system's: `sidecar.test`, an operator's MCP host on a private address. */
const withSidecar = ((hostname: string, options: object, callback: (error: Error | null, addresses: { address: string; family: number }[]) => void) =>
  hostname === 'sidecar.test' ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : dnsLookup(hostname, options, callback as never)) as unknown as typeof dnsLookup;

/**
 * What the operator's allowed prefixes open to request-named MCP servers:
 * that prefix, segment by segment, and nothing else on its host — not another
 * port or path behind the same name, not a sibling path, not a path a server
 * would read otherwise than the rule does.
 */
describe('the egress policy under allowed URL prefixes', () => {
  let target: Server;
  let targetPort: number;
  const hits: string[] = [];

  beforeAll(async () => {
    target = createServer((request, response) => {
      hits.push(request.url ?? '');
      response.end('INTERNAL-ONLY');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetPort = (target.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

  it('a host name an allowed prefix names opens no other port or path on that host: its address is refused as any other', async () => {
    const policy = new EgressPolicy({ allowedUrlPrefixes: ['http://sidecar.test:9/mcp/'], lookup: withSidecar });
    try {
      const failure = await policy.fetch(`http://sidecar.test:${targetPort}/admin/flushall`, { method: 'POST' }).then(() => null, (error: unknown) => error);
      expect(hits).toEqual([]);
      // The fetch says "fetch failed"; the refusal it carries says why, and is what a client is told.
      expect(egressRefusalIn(failure)?.message).toBe('sidecar.test resolves to 127.0.0.1, which the egress policy refuses.');
      expect(egressRefusalIn(new Error('ECONNREFUSED'))).toBeNull();
    } finally {
      await policy.close();
    }
  });

  it('a prefix allows what lies below it segment by segment: not a sibling path that merely starts with its text', () => {
    const policy = new EgressPolicy({ allowedUrlPrefixes: ['http://10.1.2.3:9000/mcp'] });
    expect(policy.check('http://10.1.2.3:9000/mcp').href).toBe('http://10.1.2.3:9000/mcp');
    expect(policy.check('http://10.1.2.3:9000/mcp/tools').pathname).toBe('/mcp/tools');
    expect(policy.check('http://10.1.2.3:9000/mcp?x=1').search).toBe('?x=1');
    expect(() => policy.check('http://10.1.2.3:9000/mcp-admin/')).toThrow(EgressRefused);
    expect(() => policy.check('http://10.1.2.3:9000/mcpx')).toThrow(EgressRefused);
  });

  it('a path a server may read two ways (an escaped slash or backslash) is refused, allowed prefix or not; other escapes read one way and are judged decoded', () => {
    const policy = new EgressPolicy({ allowedUrlPrefixes: ['http://10.1.2.3:9000/mcp/', 'http://10.1.2.3:9000/caf%c3%a9/', 'http://10.1.2.3:9000/t/acme%40corp/'] });
    for (const url of ['http://10.1.2.3:9000/admin/..%2Fmcp/', 'http://10.1.2.3:9000/mcp/..%2F..%2Fadmin', 'https://mcp.example.com/team/..%2fother', 'https://mcp.example.com/a%5C..%5Cb']) {
      expect(() => policy.check(url), url).toThrow(EgressRefused);
    }
    // The prefixes as the operator wrote them, and other spellings of them: one reading each.
    for (const url of ['http://10.1.2.3:9000/%6Dcp/', 'http://10.1.2.3:9000/caf%c3%a9/mcp', 'http://10.1.2.3:9000/caf%C3%A9/mcp', 'http://10.1.2.3:9000/caf\u00e9/mcp', 'http://10.1.2.3:9000/t/acme%40corp/mcp', 'http://10.1.2.3:9000/t/acme@corp/mcp']) {
      expect(policy.isAllowedByPrefix(canonicalHref(policy.check(url))), url).toBe(true);
    }
    expect(policy.check('https://mcp.example.com/my%20server/mcp').pathname).toBe('/my%20server/mcp');
    expect(policy.check('https://mcp.example.com/%7Euser/mcp').pathname).toBe('/%7Euser/mcp');
  });
});
