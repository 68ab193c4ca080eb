import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { StoredMetadata } from '../schema/define-agent-tables.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { StoreContext } from './store-context.js';

// A generated title records the messages it was written from in the thread's metadata, under the store's own key
// (`metadata.agentHistory.titleFrom`, client message ids), so that a redaction of one of them can clear the title
// wherever it was copied: the thread and every fork of it.

/** `derivedFrom` checked: one to ten message ids of 1 to 200 characters, without NUL or lone surrogates. */
export function assertDerivedFrom(derivedFrom: unknown): string[] | undefined {
  if (derivedFrom === undefined) return undefined;
  if (
    !Array.isArray(derivedFrom) ||
    derivedFrom.length === 0 ||
    derivedFrom.length > 10 ||
    derivedFrom.some(
      (id) =>
        typeof id !== 'string' || id.length === 0 || id.length > 200 || id.includes('\u0000') || !id.isWellFormed(),
    )
  )
    throw new InvalidArgumentError({
      argument: 'derivedFrom',
      value: derivedFrom,
      message: 'expected 1 to 10 message ids of 1 to 200 characters.',
    });
  return derivedFrom as string[];
}

/**
 * The metadata without the title's sources, and without the store's key once that leaves it empty. Metadata whose
 * `agentHistory` is not an object holding `titleFrom` is left as it is (`#-` would fail on an array there).
 */
export function withoutTitleFrom(metadata: AnyPgColumn | SQL): SQL {
  const own = sql`(${metadata}->'agentHistory')`;
  return sql`case when jsonb_typeof(${own}) = 'object' and jsonb_exists(${own}, 'titleFrom') then (case when ${own} - 'titleFrom' = '{}'::jsonb then ${metadata} - 'agentHistory' else jsonb_set(${metadata}, '{agentHistory}', ${own} - 'titleFrom') end) else ${metadata} end`;
}

/** The metadata after a rename: the title's sources recorded, or, for a title someone chose, forgotten. */
export function renamedMetadata(metadata: AnyPgColumn, derivedFrom: string[] | undefined): SQL {
  if (derivedFrom === undefined) return withoutTitleFrom(metadata);
  const withKey = sql`case when jsonb_typeof(${metadata}->'agentHistory') = 'object' then ${metadata} else ${metadata} || '{"agentHistory":{}}'::jsonb end`;
  return sql`jsonb_set(${withKey}, '{agentHistory,titleFrom}', ${JSON.stringify(derivedFrom)}::jsonb)`;
}

/** `metadata` without the title's sources (for a copy that gets a title of its own), as the SQL above does it. */
export function withoutTitleSources(metadata: StoredMetadata): StoredMetadata {
  const own = metadata.agentHistory;
  if (typeof own !== 'object' || own === null || Array.isArray(own) || !('titleFrom' in own)) return metadata;
  const { titleFrom: _titleFrom, ...rest } = own as Record<string, unknown>;
  const { agentHistory: _own, ...others } = metadata;
  return Object.keys(rest).length === 0 ? others : { ...others, agentHistory: rest };
}

/**
 * The metadata an application writes, with the store's own `agentHistory` key of the stored row kept. Built from
 * immutable functions only: Citus refuses a stable one (`jsonb_build_object`) over a column in an UPDATE.
 */
export function replacedMetadata(metadata: AnyPgColumn, replacement: StoredMetadata): SQL {
  const written = sql`${JSON.stringify(replacement)}::jsonb`;
  return sql`case when ${metadata}->'agentHistory' is null then ${written} else jsonb_set(${written}, '{agentHistory}', ${metadata}->'agentHistory') end`;
}

/**
 * Refuses a title generated from a message that is redacted by now: a title is written after its sources were read,
 * and a redaction in between would otherwise find no title to clear and leave one quoting the secret. The sources
 * are locked for share, so a redaction running meanwhile either finishes first (and this refuses) or waits for the
 * title (and clears it).
 */
export async function refuseRedactedSources(
  context: StoreContext,
  tx: TenantTransaction,
  threadId: string,
  derivedFrom: string[],
): Promise<void> {
  const { agentMessage } = context.tables;
  const sources = await tx
    .select({ messageId: agentMessage.messageId, contextState: agentMessage.contextState })
    .from(agentMessage)
    .where(
      and(
        eq(agentMessage.tenantId, context.tenantId),
        eq(agentMessage.threadId, threadId),
        inArray(agentMessage.messageId, derivedFrom),
      ),
    )
    .for('share');
  const redacted = sources.filter((source) => source.contextState === 'redacted').map((source) => source.messageId);
  if (redacted.length > 0)
    throw new InvalidArgumentError({
      argument: 'derivedFrom',
      value: redacted,
      message: 'the title was generated from a message that has been redacted since.',
    });
}

/** Clears the title of every thread of `threadIds` that was generated from message `messageId`. */
export async function clearTitlesFrom(
  context: StoreContext,
  tx: TenantTransaction,
  threadIds: string[],
  messageId: string,
): Promise<void> {
  const { agentThread } = context.tables;
  if (threadIds.length === 0) return;
  await tx
    .update(agentThread)
    .set({ title: null, metadata: withoutTitleFrom(agentThread.metadata), updatedAt: sql`now()` })
    .where(
      and(
        eq(agentThread.tenantId, context.tenantId),
        inArray(agentThread.id, threadIds),
        sql`${agentThread.metadata}->'agentHistory'->'titleFrom' @> ${JSON.stringify([messageId])}::jsonb`,
      ),
    );
}
