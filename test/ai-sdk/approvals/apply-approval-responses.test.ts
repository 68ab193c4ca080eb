import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyApprovalResponses } from '../../../src/ai-sdk/approvals/apply-approval-responses.js';
import { canonicalJson } from '../../../src/context/engine/canonical-json.js';
import { InvalidMessageError } from '../../../src/errors/index.js';

type Part = Record<string, unknown> & { type: string };

// A stored answer of two steps: an earlier tool result, text, and two calls awaiting approval.
const stored: Part[] = [
  { type: 'step-start' },
  {
    type: 'tool-search',
    toolCallId: 'c0',
    state: 'output-available',
    input: { q: 'logs' },
    output: { hits: ['/tmp/a', '/tmp/b'] },
  },
  { type: 'step-start' },
  { type: 'text', text: 'I will delete two files.', state: 'done' },
  {
    type: 'tool-deleteFile',
    toolCallId: 'c1',
    state: 'approval-requested',
    input: { path: '/tmp/a' },
    approval: { id: 'ap-1' },
  },
  {
    type: 'tool-deleteFile',
    toolCallId: 'c2',
    state: 'approval-requested',
    input: { path: '/tmp/b' },
    approval: { id: 'ap-2', isAutomatic: false },
  },
];

const respond = (parts: Part[], toolCallId: string, approved: boolean): Part[] =>
  parts.map((part) =>
    part.toolCallId === toolCallId
      ? { ...part, state: 'approval-responded', approval: { ...(part.approval as object), approved } }
      : part,
  );

/** Every path to a value inside the parts (objects and arrays included), as keys. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [prefix];
  const entries = Array.isArray(value) ? value.map((item, index) => [index, item] as const) : Object.entries(value);
  return [prefix, ...entries.flatMap(([key, item]) => paths(item, [...prefix, key]))];
}

function setAt(root: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy = (Array.isArray(root) ? [...root] : { ...(root as object) }) as Record<string | number, unknown>;
  copy[head!] = setAt(copy[head!], rest, value);
  return copy;
}

// What the client may change: the state of a requested part (4 and 5) and its approval.approved / reason.
const clientOnly = (path: Array<string | number>) =>
  (path[0] === 4 || path[0] === 5) &&
  ((path[1] === 'state' && path.length === 2) ||
    (path[1] === 'approval' && ['approved', 'reason'].includes(String(path[2]))));

describe('applyApprovalResponses', () => {
  it('should take nothing from the client but the approval answers: any other change is refused', () => {
    const answered = respond(respond(stored, 'c1', true), 'c2', false);
    const targets = paths(answered).filter((path) => path.length > 0 && !clientOnly(path));
    fc.assert(
      fc.property(
        fc.constantFrom(...targets),
        fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.dictionary(fc.string(), fc.string())),
        (path, value) => {
          const tampered = setAt(answered, path, value) as Part[];
          fc.pre(canonicalJson(tampered) !== canonicalJson(answered));
          let result;
          try {
            result = applyApprovalResponses(structuredClone(stored), tampered);
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidMessageError);
            return;
          }
          // Accepted: then only the approval answers moved, everything else is the stored copy.
          const back = result.parts.map((part, index) =>
            stored[index]!.state === 'approval-requested'
              ? { ...part, state: 'approval-requested', approval: stored[index]!.approval }
              : part,
          );
          expect(canonicalJson(back)).toBe(canonicalJson(stored));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('should apply exactly the answers given, leaving an unanswered approval pending', () => {
    const result = applyApprovalResponses(structuredClone(stored), respond(stored, 'c2', true));
    expect(result.answered).toBe(1);
    expect(result.pending).toBe(true);
    expect(result.parts[5]).toEqual({
      ...stored[5],
      state: 'approval-responded',
      approval: { id: 'ap-2', isAutomatic: false, approved: true },
    });
    expect(result.parts.slice(0, 5)).toEqual(stored.slice(0, 5));
  });

  it('should count a repeated answer as a retry and a contradicting one as a contradiction', () => {
    const once = applyApprovalResponses(structuredClone(stored), respond(stored, 'c1', true)).parts as Part[];
    expect(applyApprovalResponses(once, respond(stored, 'c1', true))).toMatchObject({ answered: 0, contradicted: 0 });
    expect(applyApprovalResponses(once, respond(stored, 'c1', false))).toMatchObject({ answered: 0, contradicted: 1 });
  });
});
