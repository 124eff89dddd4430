import { describe, expect, it } from 'vitest';
import { MAX_TOOL_ERROR_CHARS, ToolErrorSanitizer } from '../../src/executors/sanitize-tool-error.ts';
import type { McpToolParam } from '../../src/protocol/create-response-request.ts';
import { SecretRedactor } from '../../src/util/secret-redactor.ts';

const sanitizer = new ToolErrorSanitizer({
  servers: [
    { name: 'tools', url: 'http://10.0.3.7:9000/mcp' },
    { name: 'docs', url: 'https://mcp-docs.corp.example.com/mcp' },
    { name: 'kb', url: 'http://kb:8080/mcp' },
  ],
  secrets: new SecretRedactor(['sk-configured-123456']),
});
const noRequest = { mcpServers: [] };
const clean = (text: string) => sanitizer.sanitize(text, noRequest);

describe('ToolErrorSanitizer', () => {
  it('drops stack-trace lines of JavaScript, Java, Python and Go, keeping the message', () => {
    const javascript = 'TypeError: row 7 has no id\n    at parseRow (/srv/app/src/rows.js:41:13)\n    at async handler (/srv/app/src/server.js:88:5)';
    expect(clean(javascript)).toBe('TypeError: row 7 has no id');
    const java = 'java.lang.IllegalStateException: queue full\n\tat com.acme.Queue.push(Queue.java:12)\n\tat com.acme.Main.main(Main.java:5)\n\t... 3 more\nCaused by: java.io.IOException: disk full\n\tat com.acme.Disk.write(Disk.java:9)';
    expect(clean(java)).toBe('java.lang.IllegalStateException: queue full\nCaused by: java.io.IOException: disk full');
    const python = 'Traceback (most recent call last):\n  File "/opt/tool/main.py", line 12, in <module>\n    run()\n  File "/opt/tool/main.py", line 9, in run\n    raise ValueError("bad date")\nValueError: bad date';
    expect(clean(python)).toBe('ValueError: bad date');
    const go = 'panic: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.lookup(...)\n\t/home/dev/tool/main.go:14 +0x1d\nmain.main()\n\t/home/dev/tool/main.go:20 +0x25\n\nexit status 2';
    expect(clean(go)).toBe('panic: index out of range [3] with length 3\n\nexit status 2');
  });

  it("names the operator's servers where their URLs or hosts appear", () => {
    expect(clean('POST http://10.0.3.7:9000/mcp failed: 502')).toBe('POST [mcp:tools] failed: 502');
    expect(clean('connect ECONNREFUSED 10.0.3.7:9000')).toBe('connect ECONNREFUSED [mcp:tools]');
    expect(clean('getaddrinfo ENOTFOUND mcp-docs.corp.example.com')).toBe('getaddrinfo ENOTFOUND [mcp:docs]');
    expect(clean('see https://mcp-docs.corp.example.com/admin/logs?id=4.')).toBe('see [mcp:docs].');
    // A one-word host is an ordinary word too: alone it is replaced only with its port.
    expect(clean('kb:8080 refused; the kb is down')).toBe('[mcp:kb] refused; the kb is down');
  });

  it('replaces other internal URLs and addresses with [internal], keeping public ones', () => {
    expect(clean('upstream http://10.1.2.3:8000/admin answered 500')).toBe('upstream [internal] answered 500');
    expect(clean('from 192.168.4.20 and [fd00::12] and http://[::1]:3000/x')).toBe('from [internal] and [internal] and [internal]');
    expect(clean('redis://cache.internal:6379/0 timed out; db at postgres://db:5432/app')).toBe('[internal] timed out; db at [internal]');
    expect(clean('read file:///var/lib/tool/state.json')).toBe('read [internal]');
    expect(clean('rate limited, see https://docs.example.com/limits (8.8.8.8)')).toBe('rate limited, see https://docs.example.com/limits (8.8.8.8)');
    expect(clean('version 1.2.3.400 of the parser')).toBe('version 1.2.3.400 of the parser');
    expect(clean('https://user:hunter22@api.example.com/v1 refused')).toBe('https://api.example.com/v1 refused');
  });

  it("blanks configured secrets and the request's MCP header values", () => {
    const request: McpToolParam = { type: 'mcp', server_label: 'calc', server_url: 'https://calc.example/mcp', headers: { authorization: 'Bearer request-token-42' } };
    const output = sanitizer.sanitize('denied for sk-configured-123456 (token request-token-42)', { mcpServers: [{ tool: request, index: 0 }] });
    expect(output).toBe('denied for [redacted] (token [redacted])');
  });

  it('cleans JSON error outputs string by string and keeps them JSON', () => {
    const output = JSON.stringify({ error: "The tool 'tools__x' failed: boom at http://10.0.3.7:9000/mcp\n    at f (/srv/a.js:1:1)", detail: ['sk-configured-123456'] });
    expect(JSON.parse(clean(output))).toEqual({ error: "The tool 'tools__x' failed: boom at [mcp:tools]", detail: ['[redacted]'] });
  });

  it('bounds the length, keeping the head', () => {
    const long = `bad input: ${'x'.repeat(MAX_TOOL_ERROR_CHARS * 2)}`;
    const output = clean(long);
    expect(output.startsWith('bad input: xxx')).toBe(true);
    expect(output.length).toBeLessThanOrEqual(MAX_TOOL_ERROR_CHARS + 20);
    const json = clean(JSON.stringify({ error: long }));
    expect(JSON.parse(json).error.length).toBeLessThanOrEqual(MAX_TOOL_ERROR_CHARS + 20);
    const many = clean(JSON.stringify(Array.from({ length: 100 }, () => 'y'.repeat(1_000))));
    expect(many.length).toBeLessThanOrEqual(MAX_TOOL_ERROR_CHARS + 40);
    expect(JSON.parse(many)).toHaveProperty('error');
  });

  it('returns an error with nothing internal in it exactly as it was', () => {
    for (const text of ['the thing is broken', '{"error":"The tool \'x\' did not finish within 5000 ms."}', '  {"error": "spaced" }', 'Line one\nline two', '[1, 2]']) {
      expect(clean(text)).toBe(text);
    }
  });
});
