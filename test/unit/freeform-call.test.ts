import { describe, expect, it } from 'vitest';
import { freeformArguments, freeformInput } from '../../src/protocol/freeform-call.ts';

describe('a freeform call as a function call', () => {
  it('reads back the text it was wrapped as; arguments of another shape are the text', () => {
    const patch = '*** Begin Patch\n*** Add File: "a.txt"\n+\\u00e9\n*** End Patch';
    expect(freeformInput(freeformArguments(patch))).toBe(patch);
    expect(freeformInput('plain text the model wrote')).toBe('plain text the model wrote');
  });

  it('arguments cut off inside their input (a call whose turn broke off) are the text so far, an escape cut in two left out', () => {
    expect(freeformInput('{"input":"*** Begin Patch\\n*** Add')).toBe('*** Begin Patch\n*** Add');
    expect(freeformInput('{"input":"a\\')).toBe('a');
    expect(freeformInput('{"input":"a\\u00')).toBe('a');
    // An escaped backslash is whole: it stays, with what follows it.
    expect(freeformInput('{"input":"a\\\\u00')).toBe('a\\u00');
    expect(freeformInput('{"input":"a\\\\')).toBe('a\\');
    // Past the string, nothing to read: the arguments as they came.
    expect(freeformInput('{"input":"x", "y')).toBe('{"input":"x", "y');
  });
});
