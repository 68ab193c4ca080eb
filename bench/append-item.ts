// A bench message as the append functions take it (`AppendItem`): validated as the store validates it, with a fixed
// token count (the benchmarks that send the function's statement directly price the statement, not the counting).
import type { BenchMessage } from './messages.js';
import type { AppendItem } from '../src/store/append-statements.js';
import { validateMessage } from '../src/store/validate-message.js';

export function benchAppendItem(message: BenchMessage, threadId: string): AppendItem {
  const validated = validateMessage(message, { maxBytes: 1_048_576 });
  return {
    threadId,
    messageId: validated.id,
    clientRequestId: null,
    role: validated.role,
    status: 'completed',
    partsJson: validated.partsJson,
    metadataJson: validated.metadataJson,
    runId: null,
    byteSize: validated.byteSize,
    tokenCount: 100,
    tokenCounterId: 'o200k_base/gpt-tokenizer@4',
    partTokenCounts: [60, 40],
    leaseExpiresAt: null,
    pinned: false,
  };
}
