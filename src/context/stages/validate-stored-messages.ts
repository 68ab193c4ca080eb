import type { ContextMessage, ContextMessageCache } from '../../model/context-store.js';
import type { ContextUIPart } from '../../model/context-ui-message.js';
import { isToolUIPart } from '../../model/context-ui-message.js';
import { migrateMessageParts } from '../../model/message-shape-migrations.js';
import { cachedRow } from '../caches/cached-row.js';
import type { ValidateStageReport } from '../contracts/stage-reports.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';

const ROLES = new Set(['system', 'user', 'assistant']);
const STATUSES = new Set(['pending', 'streaming', 'completed', 'failed', 'cancelled']);
const TOOL_STATES = new Set([
  'input-streaming',
  'input-available',
  'approval-requested',
  'approval-responded',
  'output-available',
  'output-error',
  'output-denied',
]);

/**
 * Stage 2: checks the structure of stored messages and migrates older `UIMessage` shapes with the versioned
 * message-shape migrations (`MESSAGE_SHAPE_MIGRATIONS`, from the message's `schemaVersion`, 1 when absent). A
 * malformed message or part is left out and reported (it must not brick the conversation); AI SDK v4
 * `tool-invocation` parts become `tool-${name}` parts, `output-error.rawInput` moves to `input`, and v4 file
 * parts (`data`, `mimeType`) become data URLs. A changed message loses its stored token count so it is counted again.
 * Idempotent: its output passes through unchanged.
 */
export function validateStoredMessages({
  messages,
  cache,
}: {
  messages: readonly ContextMessage[];
  /**
   * The store's cache: a row that passed this stage unchanged is marked there, at its version, and its parts are
   * not checked again (a changed message loses its row id, so it is never cached). @default none
   */
  cache?: ContextMessageCache;
}): {
  messages: ContextMessage[];
  report: ValidateStageReport;
} {
  const removed: ContextRemoval[] = [];
  const migrated: ValidateStageReport['migrated'] = [];
  const valid: ContextMessage[] = [];
  for (const stored of messages) {
    const problem = messageProblem(stored);
    if (problem) {
      removed.push({
        sequence: Number.isSafeInteger(stored?.sequence) ? stored.sequence : null,
        reason: 'message-invalid',
        tokens: stored?.tokenCount ?? 0,
        detail: problem,
      });
      continue;
    }
    if (cache && cachedRow(stored, cache, false)?.validated) {
      valid.push(stored);
      continue;
    }
    const shaped = migrateMessageParts(stored.message.parts as unknown[], stored.schemaVersion ?? 1);
    for (const { migration } of shaped.migrations) migrated.push({ sequence: stored.sequence, migration });
    let changed = shaped.migrations.length > 0;
    const parts: ContextUIPart[] = [];
    for (const [index, part] of shaped.parts.entries()) {
      const partProblem = partProblemOf(part);
      if (partProblem) {
        removed.push({
          sequence: stored.sequence,
          reason: 'part-invalid',
          tokens: 0,
          detail: `parts[${index}]: ${partProblem}`,
        });
        changed = true;
        continue;
      }
      parts.push(part as ContextUIPart);
    }
    // Marked only for a row that reaches the model: one that does not is never converted, and its entry would only
    // be deleted again by the load.
    if (!changed && cache && stored.deletedAt == null && (stored.contextState ?? 'eligible') === 'eligible') {
      const row = cachedRow(stored, cache, true);
      if (row) row.validated = true;
    }
    // Changed here, it is no longer the row's content: no row id, so no cache keeps it under the row's key.
    valid.push(
      changed
        ? { ...stored, message: { ...stored.message, parts }, tokenCount: null, tokenCounterId: null, rowId: undefined }
        : stored,
    );
  }
  return { messages: valid, report: { stage: 'validate', removed, migrated, tokensSaved: sumRemovedTokens(removed) } };
}

/**
 * Whether {@link validateStoredMessages} keeps the row as it is without reading its parts: it is well formed and its
 * entry in `cache` says it passed at this version (false when it cannot tell: validate it).
 */
export function validatedAsIs(stored: ContextMessage, cache: ContextMessageCache | undefined): boolean {
  return (
    cache !== undefined && messageProblem(stored) === undefined && cachedRow(stored, cache, false)?.validated === true
  );
}

function messageProblem(stored: ContextMessage): string | undefined {
  if (typeof stored !== 'object' || stored === null) return 'not an object';
  if (!Number.isSafeInteger(stored.sequence) || stored.sequence < 1)
    return `sequence ${JSON.stringify(stored.sequence)} is not a positive integer`;
  const message = stored.message as unknown as Record<string, unknown> | null;
  if (typeof message !== 'object' || message === null) return 'message is not an object';
  if (typeof message.id !== 'string') return 'message.id is not a string';
  if (!ROLES.has(message.role as string))
    return `message.role ${JSON.stringify(message.role)} is not system, user or assistant`;
  if (!Array.isArray(message.parts)) return 'message.parts is not an array';
  if (!STATUSES.has(stored.status)) return `status ${JSON.stringify(stored.status)} is unknown`;
  return undefined;
}

function partProblemOf(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) return 'not an object';
  const record = part as Record<string, unknown>;
  if (typeof record.type !== 'string') return 'type is not a string';
  const type = record.type;
  if ((type === 'text' || type === 'reasoning') && typeof record.text !== 'string')
    return `${type}.text is not a string`;
  if (type === 'file' || type === 'reasoning-file') {
    if (typeof record.mediaType !== 'string') return 'file.mediaType is not a string';
    if (type === 'file' && record.providerReference != null) return undefined;
    if (typeof record.url !== 'string' || !URL.canParse(record.url))
      return `file.url ${JSON.stringify(record.url)?.slice(0, 60)} is not a URL`;
  }
  if (type === 'dynamic-tool' && typeof record.toolName !== 'string') return 'dynamic-tool.toolName is not a string';
  if (isToolUIPart(record as ContextUIPart)) {
    if (typeof record.toolCallId !== 'string') return 'toolCallId is not a string';
    if (!TOOL_STATES.has(record.state as string)) return `tool state ${JSON.stringify(record.state)} is unknown`;
    const approval = record.approval as Record<string, unknown> | undefined;
    if (approval != null && (typeof approval !== 'object' || typeof approval.id !== 'string'))
      return 'approval.id is not a string';
    if ((record.state === 'approval-requested' || record.state === 'approval-responded') && approval == null)
      return `${record.state} without an approval`;
  }
  if (type === 'steering-message' && !Array.isArray(record.parts)) return 'steering-message.parts is not an array';
  return undefined;
}
