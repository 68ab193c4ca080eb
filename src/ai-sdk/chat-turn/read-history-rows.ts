import type { StoredMessage } from '../../model/stored-rows.js';
import type { TenantHistory } from '../../store/tenant-history.js';

/** The most rows one `listMessages` page holds. */
const PAGE_ROWS = 500;

/**
 * The newest `limit` rows of the thread within `maxBytes` of `byteSize` (the newest row always), oldest first:
 * one read per 500 rows, each within what is left of the budget, so rows past it are never read.
 */
export async function readHistoryRows(history: TenantHistory, threadId: string, limit: number, maxBytes: number) {
  const rows: StoredMessage[] = [];
  let bytes = 0;
  let before: number | undefined;
  while (rows.length < limit) {
    const left = maxBytes - bytes;
    if (rows.length > 0 && left <= 0) break;
    const pageRows = Math.min(PAGE_ROWS, limit - rows.length);
    const page = await history.listMessages(threadId, { limit: pageRows, before, maxBytes: Math.max(1, left) });
    for (const row of page.messages) {
      bytes += row.byteSize;
      // Past the first page, the page's newest row is kept by listMessages even when it alone passes the budget.
      if (bytes > maxBytes && rows.length > 0) return rows.reverse();
      rows.push(row);
    }
    // A short page with more behind it ended at the budget.
    if (page.nextCursor === null || page.messages.length < pageRows) break;
    before = page.nextCursor;
  }
  return rows.reverse();
}
