import type { ContextUIPart } from './context-ui-message.js';
import { isToolUIPart } from './context-ui-message.js';

/** A rewrite of one stored part from an older `UIMessage` shape, as reported by the context engine. */
export type PartMigration = 'tool-invocation-to-tool-part' | 'raw-input-to-input' | 'file-data-to-url';

/**
 * The message-shape version this package writes: the default of `agent_message.schema_version` (a row appended
 * by this version carries it) and the version every read returns.
 *
 * - `1`: AI SDK v4/v5 shapes may occur (`tool-invocation` parts, file parts with `data`/`mimeType`, `rawInput`).
 * - `2`: AI SDK v7 `UIMessage` parts only.
 */
export const CURRENT_MESSAGE_SCHEMA_VERSION = 2;

/** One step of the message-shape registry: rewrites the parts of a message stored at `from` into `from + 1`. */
export interface MessageShapeMigration {
  /** The version the migration reads. */
  from: number;
  /** The version it produces: always `from + 1`. */
  to: number;
  /**
   * Rewrites one part; returns it unchanged (the same object) when it is already in the new shape, so that
   * running a migration on its own output changes nothing.
   */
  migratePart(part: unknown): { part: unknown; migration?: PartMigration };
}

/**
 * The versioned message-shape migrations, in order; the one place that knows old shapes. Used on every read
 * (`toStoredMessage` in the store, the context engine's validate stage); a stored row is never rewritten, so the
 * log keeps the shape it was written in. A new shape change adds the next entry and raises
 * {@link CURRENT_MESSAGE_SCHEMA_VERSION} (and the column's default, by a migration).
 */
export const MESSAGE_SHAPE_MIGRATIONS: readonly MessageShapeMigration[] = [
  { from: 1, to: 2, migratePart: migrateV4Part },
];

/**
 * Runs the migrations from `fromVersion` to {@link CURRENT_MESSAGE_SCHEMA_VERSION} over `parts`. Returns the
 * same array when nothing changed, and which rewrites were made (by index of the part). A part that is not an
 * object is left as it is (the validation that follows reports it). A version above the current one (a row
 * written by a newer release) is returned unchanged.
 */
export function migrateMessageParts(
  parts: readonly unknown[],
  fromVersion: number,
): { parts: readonly unknown[]; migrations: Array<{ index: number; migration: PartMigration }> } {
  let current = parts;
  const migrations: Array<{ index: number; migration: PartMigration }> = [];
  for (const step of MESSAGE_SHAPE_MIGRATIONS) {
    if (step.from < fromVersion) continue;
    let changed = false;
    const next = current.map((raw, index) => {
      const { part, migration } = step.migratePart(raw);
      if (migration) {
        migrations.push({ index, migration });
        changed = true;
      }
      return part;
    });
    if (changed) current = next;
  }
  return { parts: current, migrations };
}

/** Migration 1 → 2: AI SDK v4 shapes become v7 parts; v7 parts pass through unchanged. */
function migrateV4Part(raw: unknown): { part: unknown; migration?: PartMigration } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { part: raw };
  const part = raw as Record<string, any>;
  if (part.type === 'tool-invocation' && typeof part.toolInvocation === 'object' && part.toolInvocation !== null) {
    const invocation = part.toolInvocation;
    const state =
      invocation.state === 'result'
        ? 'output-available'
        : invocation.state === 'call'
          ? 'input-available'
          : 'input-streaming';
    return {
      part: {
        type: `tool-${invocation.toolName}`,
        toolCallId: invocation.toolCallId,
        state,
        input: invocation.args,
        ...(state === 'output-available' ? { output: invocation.result } : {}),
      },
      migration: 'tool-invocation-to-tool-part',
    };
  }
  if (
    part.state === 'output-error' &&
    part.rawInput !== undefined &&
    typeof part.type === 'string' &&
    isToolUIPart(part as ContextUIPart)
  ) {
    const { rawInput, ...rest } = part;
    return { part: { ...rest, input: part.input ?? rawInput }, migration: 'raw-input-to-input' };
  }
  if (part.type === 'file' && part.url === undefined && typeof part.data === 'string') {
    const { data, mimeType, ...rest } = part;
    const mediaType = part.mediaType ?? mimeType;
    return { part: { ...rest, mediaType, url: `data:${mediaType};base64,${data}` }, migration: 'file-data-to-url' };
  }
  return { part };
}
