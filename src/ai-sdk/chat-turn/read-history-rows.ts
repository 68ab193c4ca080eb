import type { StoredMessage } from '../../model/stored-rows.js';
import type { TenantHistory } from '../../store/tenant-history.js';

// Pages of 8 rows, doubling up to 32: a thread of small messages takes a few queries, and what is held stays
// within the byte budget plus one page (at most 32 messages of the store's maxMessageBytes).
const FIRST_PAGE_ROWS = 8;
const LARGEST_PAGE_ROWS = 32;

/**
 * The newest `limit` rows of the thread within `maxBytes` of `byteSize` (the newest row always), oldest first.
 * Rows past the budget are not read.
 */
export async function readHistoryRows(history: TenantHistory, threadId: string, limit: number, maxBytes: number) {
  const rows: StoredMessage[] = [];
  let bytes = 0;
  let before: number | undefined;
  let pageRows = FIRST_PAGE_ROWS;
  while (rows.length < limit) {
    const page = await history.listMessages(threadId, { limit: Math.min(pageRows, limit - rows.length), before });
    pageRows = Math.min(pageRows * 2, LARGEST_PAGE_ROWS);
    for (const row of page.messages) {
      bytes += row.byteSize;
      if (bytes > maxBytes && rows.length > 0) return rows.reverse();
      rows.push(row);
    }
    if (page.nextCursor === null) break;
    before = page.nextCursor;
  }
  return rows.reverse();
}
