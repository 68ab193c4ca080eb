// A preview names the call it shortens and the stored message the call is in: a provider may reuse a call id in
// another message, which keeps its own output. A preview made of a step of the request (not stored) is made of no
// stored message, and a record written before previews named their message makes them of every call with the id.
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { applyToolOutputPreviews } from '../../../src/context/stages/apply-tool-output-previews.js';
import { convertToContextSegments } from '../../../src/context/stages/convert-to-context-segments.js';
import { readSnapshotPruning } from '../../../src/context/engine/context-snapshot-pruning.js';
import { renderSegments } from '../../../src/context/segments/context-segment.js';
import type { ToolOutputPreview } from '../../../src/context/contracts/tool-output-preview.js';
import { toolOutputPreviewMarker } from '../../../src/context/stages/preview-tool-output.js';
import { assistant, smallMeasure, stepStart, stored, text, toolResult, user, words } from '../fixtures.js';

const measure = smallMeasure(100_000);
const answer = (id: string, output: string) =>
  assistant(id, stepStart, toolResult('search', 'call_0', { query: id }, output), stepStart, text('Done.'));
const segments = convertToContextSegments({
  messages: [
    stored(1, user('u1', 'First?')),
    stored(2, answer('a1', words(400, 'first'))),
    stored(3, user('u2', 'Second?')),
    stored(4, answer('a2', words(400, 'second'))),
  ],
  measure,
}).segments;

/** Per stored answer (sequences 2 and 4), whether its `call_0` output was previewed. */
function previewedAnswers(previews: ToolOutputPreview[]): boolean[] {
  const rendered = renderSegments(applyToolOutputPreviews({ segments, previews, measure }).segments);
  const outputs = rendered
    .filter((message): message is Extract<ModelMessage, { role: 'tool' }> => message.role === 'tool')
    .map((message) => JSON.stringify(message.content));
  expect(outputs).toHaveLength(2);
  return outputs.map((output) => output.includes(toolOutputPreviewMarker));
}

describe('previews of a reused call id', () => {
  it('should shorten the call in the stored message the preview names, not the other use of its id', () => {
    expect(previewedAnswers([{ toolCallId: 'call_0', maxTokens: 20, sequence: 2 }])).toEqual([true, false]);
    expect(previewedAnswers([{ toolCallId: 'call_0', maxTokens: 20, sequence: 4 }])).toEqual([false, true]);
  });

  it('should shorten no stored message for a preview made of a step of the request', () => {
    expect(previewedAnswers([{ toolCallId: 'call_0', maxTokens: 20, sequence: null }])).toEqual([false, false]);
  });

  it('should shorten every use of the id for a preview recorded without its message', () => {
    expect(previewedAnswers([{ toolCallId: 'call_0', maxTokens: 20 }])).toEqual([true, true]);
  });

  it('should read a snapshot record keeping the message of each preview, and ignore a malformed one', () => {
    const record = readSnapshotPruning({
      previews: [
        { toolCallId: 'call_0', maxTokens: 20, sequence: 2 },
        { toolCallId: 'call_1', maxTokens: 20, sequence: null },
        { toolCallId: 'call_2', maxTokens: 20 },
        { toolCallId: 'call_3', maxTokens: 20, sequence: '4' },
      ],
    });
    expect(record.previews).toEqual([
      { toolCallId: 'call_0', maxTokens: 20, sequence: 2 },
      { toolCallId: 'call_1', maxTokens: 20, sequence: null },
      { toolCallId: 'call_2', maxTokens: 20 },
      { toolCallId: 'call_3', maxTokens: 20 },
    ]);
  });
});
