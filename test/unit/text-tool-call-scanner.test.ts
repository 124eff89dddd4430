import { describe, expect, it } from 'vitest';
import { CallScanner, type ScannedSegment } from '../../src/providers/text-tool-calls/call-scanner.ts';
import { readCandidate, type CandidateReading } from '../../src/providers/text-tool-calls/read-tool-calls.ts';

const TOOLS = ['get_weather', 'echo'];

type Piece = { text: string } | { reading: CandidateReading; raw: string };

/** Scans `pieces` as streamed deltas and reads each candidate; neighbouring text is joined. */
function scan(pieces: string[]): Piece[] {
  const scanner = new CallScanner();
  const segments = [...pieces.flatMap((piece) => scanner.push(piece)), ...scanner.end()];
  return joinText(segments);
}

function joinText(segments: ScannedSegment[]): Piece[] {
  const out: Piece[] = [];
  for (const segment of segments) {
    const last = out.at(-1);
    const reading = segment.kind === 'candidate' ? readCandidate(segment.body, segment.complete, TOOLS) : null;
    if (segment.kind === 'candidate' && reading?.kind !== 'text') {
      out.push({ reading: reading!, raw: segment.lead + segment.raw });
      continue;
    }
    // Candidates that are no call are shown as written.
    const text = segment.kind === 'text' ? segment.text : segment.lead + segment.raw;
    if (last && 'text' in last) last.text += text;
    else out.push({ text });
  }
  return out;
}

/** The same text whole, then one character per delta: both must read the same. */
function scanBothWays(text: string): Piece[] {
  const whole = scan([text]);
  expect(scan([...text])).toEqual(whole);
  return whole;
}

const call = (name: string, args: unknown, terminal = false) => ({ name, arguments: JSON.stringify(args), terminal });

describe('text tool calls: scanning and reading the model\'s text', () => {
  it('a bare call is one candidate read as a call, nothing shown', () => {
    expect(scanBothWays('{"tool": "get_weather", "parameters": {"city": "Paris"}, "terminate": false}')).toEqual([
      { reading: { kind: 'calls', calls: [call('get_weather', { city: 'Paris' })] }, raw: '{"tool": "get_weather", "parameters": {"city": "Paris"}, "terminate": false}' },
    ]);
  });

  it('a fenced call (```json, or no language) is read from inside the fence', () => {
    for (const fence of ['```json', '```', '````tool_call']) {
      const closing = fence.replace(/[a-z_]+$/, '');
      const pieces = scanBothWays(`${fence}\n{"tool": "echo", "parameters": {"text": "hi"}}\n${closing}\n`);
      expect(pieces).toEqual([{ reading: { kind: 'calls', calls: [call('echo', { text: 'hi' })] }, raw: expect.stringContaining('"echo"') }]);
    }
  });

  it('prose then a call: the prose is text without the blank lines before the call', () => {
    expect(scanBothWays('Let me check the weather.\n\n{"tool":"get_weather","parameters":{"city":"Oslo"}}')).toEqual([
      { text: 'Let me check the weather.' },
      { reading: { kind: 'calls', calls: [call('get_weather', { city: 'Oslo' })] }, raw: '\n\n{"tool":"get_weather","parameters":{"city":"Oslo"}}' },
    ]);
    expect(scanBothWays('Checking.\n```json\n{"tool":"echo","parameters":{}}\n```')[0]).toEqual({ text: 'Checking.' });
  });

  it('prose streams out as it comes: nothing is held while the text cannot be a call', () => {
    const scanner = new CallScanner();
    expect(scanner.push('The set {1, 2} has')).toEqual([{ kind: 'text', text: 'The set {1, 2} has' }]);
    expect(scanner.push(' two elements')).toEqual([{ kind: 'text', text: ' two elements' }]);
    // A line break may precede a call: held until the next line shows what it is.
    expect(scanner.push('.\n')).toEqual([{ kind: 'text', text: '.' }]);
    expect(scanner.push('Done')).toEqual([{ kind: 'text', text: '\nDone' }]);
    // A code block is not a call: it streams too.
    expect(scanner.push('\n```python\nx = {')).toEqual([{ kind: 'text', text: '\n```python\nx = {' }]);
    expect(scanner.push('"a": 1}\n```\nok')).toEqual([{ kind: 'text', text: '"a": 1}\n```\nok' }]);
    expect(scanner.end()).toEqual([]);
  });

  it('braces and quotes inside strings do not end a call early', () => {
    const text = '{"tool": "echo", "parameters": {"text": "a } b { \\"c\\" ]"}}';
    expect(scanBothWays(text)).toEqual([{ reading: { kind: 'calls', calls: [call('echo', { text: 'a } b { "c" ]' })] }, raw: text }]);
  });

  it('text that merely mentions { or [ passes through whole', () => {
    const text = 'Use {braces} like this: f(x) = {x | x > 0}.\n[the docs](https://example.com) say so.\n`code` and ``more``';
    expect(scanBothWays(text)).toEqual([{ text }]);
  });

  it('JSON that is no call (no "tool"/"parameters" keys) is text, shown whole once it closes', () => {
    expect(scanBothWays('{"temperature": 21, "unit": "C"}\nThat is all.')).toEqual([{ text: '{"temperature": 21, "unit": "C"}\nThat is all.' }]);
    expect(scanBothWays('```json\n{"a": [1, 2]}\n```')).toEqual([{ text: '```json\n{"a": [1, 2]}\n```' }]);
    expect(scanBothWays('{ not json at all }')).toEqual([{ text: '{ not json at all }' }]);
    // An answer whose own fields include a "tool" (a structured answer's schema may ask for one) is an answer, unless it names a tool.
    expect(scanBothWays('{"tool": "hand saw", "reason": "it cuts"}')).toEqual([{ text: '{"tool": "hand saw", "reason": "it cuts"}' }]);
    expect((scanBothWays('{"tool": "echo", "reason": "x"}')[0] as { reading: CandidateReading }).reading.kind).toBe('invalid');
    // So is one with a "parameters" field (a job's settings, an example request body), unless its "name" is a tool's.
    expect(scanBothWays('{"name": "nightly-backup", "parameters": {"retries": 3}}')).toEqual([{ text: '{"name": "nightly-backup", "parameters": {"retries": 3}}' }]);
    expect(scanBothWays('Send this:\n```json\n{"model": "m", "parameters": {"temperature": 0}}\n```')).toEqual([{ text: 'Send this:\n```json\n{"model": "m", "parameters": {"temperature": 0}}\n```' }]);
  });

  it('prose, a fenced call, prose: the line break after the fence stays with the prose after it, as after a bare call', () => {
    const fenced = scanBothWays('Let me check the forecast.\n```json\n{"tool":"echo","parameters":{"text":"x"}}\n```\nParis is usually mild in May.');
    const bare = scanBothWays('Let me check the forecast.\n{"tool":"echo","parameters":{"text":"x"}}\nParis is usually mild in May.');
    const shown = (pieces: Piece[]) => pieces.filter((piece): piece is { text: string } => 'text' in piece).map((piece) => piece.text).join('');
    expect(shown(fenced)).toBe('Let me check the forecast.\nParis is usually mild in May.');
    expect(shown(bare)).toBe(shown(fenced));
    // Nothing after the fence: nothing shown for its line break.
    expect(scanBothWays('```json\n{"tool":"echo","parameters":{}}\n```\n')).toHaveLength(1);
  });

  it('a call followed by prose: the call is read, the prose shown', () => {
    expect(scanBothWays('{"tool":"echo","parameters":{"text":"x"}} I will wait.')).toEqual([
      { reading: { kind: 'calls', calls: [call('echo', { text: 'x' })] }, raw: '{"tool":"echo","parameters":{"text":"x"}}' },
      { text: ' I will wait.' },
    ]);
  });

  it('several calls: one after another, as an array, or several in one fence', () => {
    const a = '{"tool":"echo","parameters":{"text":"a"}}';
    const b = '{"tool":"get_weather","parameters":{"city":"Rome"},"terminate":true}';
    const calls = [call('echo', { text: 'a' }), call('get_weather', { city: 'Rome' }, true)];
    const readings = (pieces: Piece[]) => pieces.flatMap((piece) => ('reading' in piece && piece.reading.kind === 'calls' ? piece.reading.calls : []));
    expect(readings(scanBothWays(`${a}\n${b}`))).toEqual(calls);
    expect(readings(scanBothWays(`${a}${b}`))).toEqual(calls);
    expect(readings(scanBothWays(`[\n  ${a},\n  ${b}\n]`))).toEqual(calls);
    expect(readings(scanBothWays(`\`\`\`json\n${a}\n${b}\n\`\`\``))).toEqual(calls);
  });

  it('broken calls are invalid, each with what is wrong with it', () => {
    const problem = (text: string) => {
      const pieces = scanBothWays(text);
      const reading = pieces.find((piece) => 'reading' in piece) as { reading: CandidateReading } | undefined;
      return reading?.reading.kind === 'invalid' ? reading.reading.problem : reading?.reading.kind;
    };
    expect(problem('{"tool": "echo", "parameters": {"text": "hi"},}')).toMatch(/^the tool call is not valid JSON \(/);
    expect(problem('{"tool": "echo", "parameters": {"text": "hi"')).toBe('the tool call is cut off: its JSON never closes.');
    expect(problem('```json\n{"tool": "echo", "parameters": {}}')).toBe('calls');
    expect(problem('{"tool": "launch_rockets", "parameters": {}}')).toBe('there is no tool named "launch_rockets"; the tools are: get_weather, echo.');
    expect(problem('{"parameters": {"city": "Paris"}}')).toBe('"tool" must be the name of a tool (the tools are: get_weather, echo).');
    // Function-call JSON naming an offered tool is a call written the wrong way: the model is told how.
    expect(problem('{"name": "echo", "parameters": {"text": "hi"}}')).toBe('"tool" must be the name of a tool (the tools are: get_weather, echo).');
    expect(problem('{"tool": "launch_rockets"}')).toBe('there is no tool named "launch_rockets"; the tools are: get_weather, echo.');
    expect(problem('{"tool": "echo"}')).toBe('"parameters" of the call to echo must be a JSON object (use {} when the tool takes no arguments).');
    expect(problem('{"tool": "echo", "parameters": "text=hi"}')).toMatch(/"parameters" of the call to echo must be a JSON object/);
    expect(problem('{"tool": "echo", "parameters": {}, "terminate": "yes"}')).toBe('"terminate" must be true or false.');
    expect(problem('[{"tool": "echo", "parameters": {}}, 42]')).toMatch(/every entry of a list of tool calls/);
  });

  it('the text around a fenced block that is not JSON, and an unclosed code fence, are shown as they are', () => {
    expect(scanBothWays('See:\n```\nplain words\n```\nEnd')).toEqual([{ text: 'See:\n```\nplain words\n```\nEnd' }]);
    expect(scanBothWays('```sh\nls -la')).toEqual([{ text: '```sh\nls -la' }]);
  });
});
