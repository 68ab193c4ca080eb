import { getTableColumns } from 'drizzle-orm';
import type { StoredSnapshot, StoredSummary } from '../model/stored-rows.js';
import type { StoreContext } from './store-context.js';

/** The summary columns a read returns: everything but the tenant and `updatedAt`. */
export function summaryColumns(context: StoreContext) {
  const { tenantId: _tenantId, updatedAt: _updatedAt, ...columns } = getTableColumns(context.tables.agentSummary);
  return columns;
}

/** The snapshot columns a read returns: everything but the tenant. */
export function snapshotColumns(context: StoreContext) {
  const { tenantId: _tenantId, ...columns } = getTableColumns(context.tables.agentContextSnapshot);
  return columns;
}

type SummaryRow = Omit<StoreContext['tables']['agentSummary']['$inferSelect'], 'tenantId' | 'updatedAt'>;
type SnapshotRow = Omit<StoreContext['tables']['agentContextSnapshot']['$inferSelect'], 'tenantId'>;

/** Maps a summary row ({@link summaryColumns}) to a {@link StoredSummary}: its sequences become numbers. */
export function toSummary(row: SummaryRow): StoredSummary {
  return { ...row, fromSequence: Number(row.fromSequence), throughSequence: Number(row.throughSequence) };
}

/** Maps a snapshot row ({@link snapshotColumns}) to a {@link StoredSnapshot}: its boundary becomes a number. */
export function toSnapshot(row: SnapshotRow): StoredSnapshot {
  return { ...row, throughSequence: Number(row.throughSequence) };
}
