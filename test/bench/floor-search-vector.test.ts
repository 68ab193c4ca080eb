import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { MessageFactory } from '../../bench/messages.js';
import { searchVector } from '../../bench/peers/guarded-insert-peer.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

// The searchable floors of the benchmarks index each message with their own copy of the store's extraction (the
// store's is its trigger): a floor whose vectors differed from the store's would price other work. Row by row, over
// W1's own payloads, the copy must give the vector the store stored.
describe.each(BACKENDS)("the floors' search vector on %s", (backend) => {
  const database = useTestDatabase(backend);

  it("should equal the store's stored vector for every one of W1's payloads", async () => {
    const factory = new MessageFactory({ seed: 42 });
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    const count = factory.templates.length;
    for (let k = 0; k < count; k++) await store.appendMessage(thread.id, factory.make(k) as never);
    const [row] = await database.admin.query<{ stored: number; indexed: number; differing: number; texts: number }>(
      `select count(*)::int as stored, count(search_vector)::int as indexed,
         count(*) filter (where search_vector is distinct from ${searchVector('parts')})::int as differing,
         count(*) filter (where search_vector <> ''::tsvector)::int as texts
       from agent_message where thread_id = $1`,
      [thread.id],
    );
    expect(row).toEqual({ stored: count, indexed: count, differing: 0, texts: row!.texts });
    // The payloads hold text to index: equal empty vectors would prove nothing.
    expect(row!.texts).toBeGreaterThan(count / 2);
  });
});
