import { safeValidateUIMessages } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/index.js';
import { validateParts } from '../../src/store/validate-message.js';

// One valid example of every part kind and tool state the AI SDK v7 UI message schema knows.
const pm = { openai: { itemId: 'x', n: 1, nested: { a: [1, null, 'b'] } } };
const approval = { id: 'ap-1' };
const tool = (state: string, extra: Record<string, unknown>) => ({
  type: 'tool-weather',
  toolCallId: 'call-1',
  state,
  input: { city: 'Paris' },
  ...extra,
});
const VALID_PARTS: Array<Record<string, unknown>> = [
  { type: 'text', text: 'hi', state: 'done', providerMetadata: pm },
  {
    type: 'text',
    text: 'cited',
    citations: [
      { source: { type: 'source', sourceType: 'url', id: 's', url: 'https://e.com' }, startIndex: 0, endIndex: 2 },
      { source: { type: 'source', sourceType: 'document', id: 'd', mediaType: 'text/plain', title: 'T' } },
    ],
  },
  { type: 'reasoning', text: 'think', state: 'streaming', id: 'r1' },
  { type: 'custom', kind: 'openai.compaction' },
  { type: 'source-url', sourceId: 's1', url: 'https://e.com', title: 'E' },
  { type: 'source-document', sourceId: 's2', mediaType: 'application/pdf', title: 'Doc', filename: 'd.pdf' },
  { type: 'file', mediaType: 'image/png', url: 'https://e.com/a.png', providerReference: { openai: 'file-1' } },
  { type: 'reasoning-file', mediaType: 'image/png', url: 'https://e.com/b.png' },
  {
    type: 'steering-message',
    id: 'st-1',
    parts: [
      { type: 'text', text: 'go on' },
      { type: 'file', mediaType: 'text/plain', url: 'data:,x' },
    ],
  },
  { type: 'step-start' },
  { type: 'data-weather', id: 'd1', data: { tempC: 18 } },
  tool('input-streaming', { input: undefined, rawInput: '{"ci', inputEncoding: 'json' }),
  tool('input-available', { providerExecuted: false, title: 'Weather', toolMetadata: { k: 1 } }),
  tool('approval-requested', { approval: { ...approval, requestReason: 'costly', isAutomatic: false } }),
  tool('approval-responded', { approval: { ...approval, approved: false, reason: 'no' } }),
  tool('output-available', { output: { tempC: 18 }, preliminary: true, approval: { ...approval, approved: true } }),
  tool('output-error', { errorText: 'boom', rawInput: 3, resultProviderMetadata: pm }),
  tool('output-denied', { approval: { ...approval, approved: false } }),
  { type: 'dynamic-tool', toolName: 'search', toolCallId: 'c2', state: 'output-available', input: {}, output: 1 },
  { type: 'dynamic-tool', toolName: 'search', toolCallId: 'c3', state: 'input-available', input: {}, dynamic: false },
];

const FIELDS = [
  'type',
  'text',
  'state',
  'toolCallId',
  'toolName',
  'input',
  'output',
  'errorText',
  'rawInput',
  'approval',
  'providerMetadata',
  'citations',
  'mediaType',
  'url',
  'filename',
  'title',
  'sourceId',
  'kind',
  'id',
  'parts',
  'data',
  'dynamic',
  'preliminary',
  'providerReference',
  'inputEncoding',
  'toolMetadata',
];
const VALUES = [
  'txt',
  'bogus',
  'text',
  'done',
  'tool-x',
  'data-x',
  'dynamic-tool',
  'output-available',
  'input-streaming',
  'json',
  '',
  0,
  -1,
  1.5,
  true,
  false,
  null,
  [],
  [1],
  {},
  { a: 1 },
  { a: { b: 'c' } },
  { a: 'not-an-object' },
  { id: 'ap', approved: true },
  { id: 'ap', approved: false },
  { id: 'ap' },
  [{ type: 'text', text: 'x' }],
  [{ type: 'txt' }],
  [{ source: { type: 'source', sourceType: 'url', id: 's', url: 'u' }, startIndex: -1 }],
];

// Where a mutation lands: the part itself or an object nested in it (approval, citation, source, steering part…).
const INSIDE = [
  '',
  'approval',
  'citations.0',
  'citations.0.source',
  'parts.0',
  'providerMetadata',
  'providerMetadata.openai',
];
const FIELDS_INSIDE = [...FIELDS, 'approved', 'reason', 'sourceType', 'startIndex', 'openai', 'isAutomatic'];
type Mutation =
  { kind: 'set'; inside: string; field: string; value: unknown } | { kind: 'drop'; inside: string; field: string };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    inside: fc.constantFrom(...INSIDE),
    field: fc.constantFrom(...FIELDS_INSIDE),
    value: fc.constantFrom(...VALUES),
  }),
  fc.record({
    kind: fc.constant('drop' as const),
    inside: fc.constantFrom(...INSIDE),
    field: fc.constantFrom(...FIELDS_INSIDE),
  }),
);
const target = (part: Record<string, unknown>, inside: string): Record<string, unknown> | undefined => {
  let current: unknown = part;
  for (const key of inside.split('.').filter(Boolean)) {
    current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined;
  }
  return current !== null && typeof current === 'object' ? (current as Record<string, unknown>) : undefined;
};
const mutatedPart = fc
  .tuple(fc.constantFrom(...VALID_PARTS), fc.array(mutation, { maxLength: 3 }))
  .map(([part, mutations]) => {
    const copy: Record<string, unknown> = structuredClone(part);
    for (const change of mutations) {
      const object = target(copy, change.inside);
      if (!object) continue;
      if (change.kind === 'drop') delete object[change.field];
      else object[change.field] = structuredClone(change.value);
    }
    // What arrives over the wire or comes back from jsonb: JSON.
    return JSON.parse(JSON.stringify(copy)) as unknown;
  });

const storeAccepts = (part: unknown): boolean => {
  try {
    validateParts([part], 'assistant');
    return true;
  } catch (error) {
    if (error instanceof InvalidMessageError) return false;
    throw error;
  }
};
const sdkAccepts = async (part: unknown): Promise<boolean> =>
  (await safeValidateUIMessages({ messages: [{ id: 'm', role: 'assistant', parts: [part] }] })).success;

describe('the store part rule and the AI SDK schema', () => {
  it('should accept every valid part kind and tool state', async () => {
    for (const part of VALID_PARTS) {
      const wire = JSON.parse(JSON.stringify(part)) as unknown;
      expect(await sdkAccepts(wire), JSON.stringify(part)).toBe(true);
      expect(storeAccepts(wire), JSON.stringify(part)).toBe(true);
    }
  });

  it('should agree with validateUIMessages on generated valid and mutated parts', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedPart, async (part) => {
        expect(storeAccepts(part), JSON.stringify(part)).toBe(await sdkAccepts(part));
      }),
      { numRuns: 5000 },
    );
  });

  it('should name the path of the offending value', () => {
    expect(() => validateParts([{ type: 'text', text: 'a' }, { type: 'txt' }], 'user')).toThrow(
      expect.objectContaining({ path: 'parts[1].type', value: 'txt' }),
    );
    expect(() => validateParts([tool('bogus', {})], 'assistant')).toThrow(
      expect.objectContaining({ path: 'parts[0].state', value: 'bogus' }),
    );
    expect(() => validateParts([tool('output-error', {})], 'assistant')).toThrow(
      expect.objectContaining({ path: 'parts[0].errorText' }),
    );
  });
});
