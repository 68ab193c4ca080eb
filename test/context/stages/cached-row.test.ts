// cachedRow finds a row's cache entry once per row object, and must look again when the object now stands for
// another version: an application that reuses its row objects between requests and changes one in place (a new
// content version, status, message id, schema version, row id or creation time) must never get the entry of what the
// row was.
import { describe, expect, it } from 'vitest';
import type { ContextMessage } from '../../../src/context/index.js';
import { cachedRow } from '../../../src/context/stages/cached-row.js';
import { createContextMessageCache } from '../../../src/tokens/context-message-cache.js';

const row = (): ContextMessage => ({
  rowId: '00000000-0000-4000-8000-000000000001',
  contentVersion: 1,
  createdAt: new Date('2026-12-01T00:00:00Z'),
  sequence: 1,
  message: { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'Before.' }] },
  status: 'completed',
  contextState: 'eligible',
  pinned: false,
  tokenCount: null,
  tokenCounterId: null,
  deletedAt: null,
});

describe('cachedRow', () => {
  it('should give the same entry for the same row object, and look again once it is changed in place', () => {
    const changes: Array<[string, (stored: ContextMessage) => void]> = [
      ['content version', (stored) => (stored.contentVersion = 2)],
      ['status', (stored) => (stored.status = 'cancelled')],
      ['message id', (stored) => ((stored.message as { id: string }).id = 'a2')],
      ['schema version', (stored) => (stored.schemaVersion = 2)],
      ['row id', (stored) => (stored.rowId = '00000000-0000-4000-8000-000000000002')],
      ['creation time', (stored) => (stored.createdAt = new Date('2026-12-02T00:00:00Z'))],
    ];
    for (const [name, change] of changes) {
      const cache = createContextMessageCache().scoped('tenant\u0000thread');
      const stored = row();
      const first = cachedRow(stored, cache, true)!;
      first.validated = true;
      expect(cachedRow(stored, cache, false), name).toBe(first);
      change(stored);
      expect(cachedRow(stored, cache, false), name).toBeUndefined();
      const second = cachedRow(stored, cache, true)!;
      expect(second, name).not.toBe(first);
      expect(second.validated, name).toBe(false);
    }
  });

  it('should not hand one cache’s entry to a request through another cache', () => {
    const stored = row();
    const one = createContextMessageCache().scoped('tenant\u0000thread');
    const other = createContextMessageCache().scoped('tenant\u0000thread');
    const first = cachedRow(stored, one, true)!;
    expect(cachedRow(stored, other, false)).toBeUndefined();
    expect(cachedRow(stored, other, true)).not.toBe(first);
  });
});
