import { InvalidMessageError } from '../errors/invalid-message-error.js';
import { MessageTooLargeError } from '../errors/message-too-large-error.js';
import { MESSAGE_ROLES, type StoredMessagePart, type StoredMetadata } from '../schema/define-agent-tables.js';
import type { MessageRole } from '../model/stored-rows.js';
import { migrateMessageParts } from '../model/message-shape-migrations.js';
import { checkUIMessagePart } from './ui-part-rules.js';

/** A message that passed validation, with its serialized size. */
export interface ValidatedMessage {
  /** The message id. */
  id: string;
  /** The message role. */
  role: MessageRole;
  /** The validated parts. */
  parts: StoredMessagePart[];
  /** The validated metadata (`{}` when there was none). */
  metadata: StoredMetadata;
  /** `parts` as JSON text. */
  partsJson: string;
  /** `metadata` as JSON text. */
  metadataJson: string;
  /** `partsJson` and `metadataJson` in UTF-8 bytes. */
  byteSize: number;
}

const MAX_ID_LENGTH = 200;
const MAX_DEPTH = 64;

/**
 * Throws {@link InvalidMessageError} when `value` nests objects or arrays deeper than the store accepts (64 levels),
 * walking it without recursion: a request body can be nested far deeper than the call stack, and every recursive
 * reader after it (schema validation, hashing, the store's own checks) would otherwise overflow on it.
 */
export function assertJsonDepth(value: unknown, path: string): void {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > MAX_DEPTH)
      throw new InvalidMessageError({ path, value: '…', message: `nested deeper than ${MAX_DEPTH} levels.` });
    for (const item of Object.values(current)) pending.push([item, depth + 1]);
  }
}

/**
 * Checks that a value is JSON that Postgres `jsonb` accepts: no NUL characters and no lone UTF-16 surrogates
 * in any string or key, no non-finite numbers, no cycles or functions. Throws {@link InvalidMessageError}
 * naming the path of the first offending value.
 */
export function assertStorableJson(value: unknown, path: string, depth = 0): void {
  if (depth > MAX_DEPTH)
    throw new InvalidMessageError({ path, value: '…', message: `nested deeper than ${MAX_DEPTH} levels.` });
  switch (typeof value) {
    case 'string':
      assertStorableString(value, path);
      return;
    case 'number':
      if (!Number.isFinite(value))
        throw new InvalidMessageError({ path, value: String(value), message: 'not a finite number.' });
      return;
    case 'boolean':
      return;
    case 'undefined':
      return;
    case 'object':
      if (value === null) return;
      // A path is built only for a value that fails, has children or lies past the depth limit (which it fails):
      // a leaf that passes needs none.
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index];
          if (depth >= MAX_DEPTH || !isStorableLeaf(item)) assertStorableJson(item, `${path}[${index}]`, depth + 1);
        }
        return;
      }
      if (value instanceof Date) return;
      for (const key of Object.keys(value)) {
        if (!isStorableString(key)) assertStorableString(key, `${path} key`);
        const item: unknown = (value as Record<string, unknown>)[key];
        if (depth >= MAX_DEPTH || !isStorableLeaf(item)) assertStorableJson(item, `${path}.${key}`, depth + 1);
      }
      return;
    default:
      throw new InvalidMessageError({ path, value: typeof value, message: 'not a JSON value.' });
  }
}

/** A string `jsonb` stores: no NUL, no lone surrogate. */
function isStorableString(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

/** A scalar that passes {@link assertStorableJson} (false for objects and arrays, which are walked). */
function isStorableLeaf(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
      return isStorableString(value);
    case 'number':
      return Number.isFinite(value);
    case 'boolean':
    case 'undefined':
      return true;
    default:
      return value === null;
  }
}

function assertStorableString(value: string, path: string): void {
  if (value.includes('\u0000')) throw new InvalidMessageError({ path, value, message: 'contains a NUL character.' });
  if (!value.isWellFormed())
    throw new InvalidMessageError({ path, value, message: 'contains a lone UTF-16 surrogate.' });
}

/**
 * Validates a message's parts (appends, checkpoints, finalization, reopening): older AI SDK shapes are migrated
 * first (a v4 `tool-invocation` part), then every part must be one the AI SDK's `validateUIMessages` accepts
 * (mirrored in `checkUIMessagePart`) and storable as `jsonb`. Returns the parts in the current shape.
 */
export function validateParts(parts: unknown, role: string): StoredMessagePart[] {
  if (!Array.isArray(parts))
    throw new InvalidMessageError({ path: 'parts', value: parts, message: 'must be an array.' });
  if (parts.length === 0 && role !== 'assistant') {
    throw new InvalidMessageError({
      path: 'parts',
      value: parts,
      message: `a ${role} message needs at least one part.`,
    });
  }
  assertJsonDepth(parts, 'parts');
  // Storable first: a NUL or a lone surrogate is named even inside a part that is also malformed.
  assertStorableJson(parts, 'parts');
  // Stored rows carry the current shape version (the column default), so older shapes that pass the checks (a v4
  // file part with `data`, a `rawInput`) are written migrated: a row marked current is never in an older shape.
  const migrated = migrateMessageParts(parts, 1).parts;
  migrated.forEach((part, index) => checkUIMessagePart(part, `parts[${index}]`));
  return migrated as StoredMessagePart[];
}

/** Validates metadata: undefined (stored as `{}`) or a plain JSON object. */
export function validateMetadata(metadata: unknown): StoredMetadata {
  if (metadata === undefined || metadata === null) return {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new InvalidMessageError({ path: 'metadata', value: metadata, message: 'must be a JSON object.' });
  }
  assertStorableJson(metadata, 'metadata');
  // An object without a prototype (Object.create(null)) as a plain one, with the same own keys: Drizzle's
  // statement builder reads every value's prototype.
  return (Object.getPrototypeOf(metadata) === null ? { ...metadata } : metadata) as StoredMetadata;
}

/** Validates a `UIMessage`'s structure and size. Throws a typed error naming the offending value. */
export function validateMessage(message: unknown, { maxBytes }: { maxBytes: number }): ValidatedMessage {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new InvalidMessageError({ path: 'message', value: message, message: 'must be an object.' });
  }
  const { id, role, parts, metadata } = message as Record<string, unknown>;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new InvalidMessageError({
      path: 'id',
      value: id,
      message: `must be a string of 1 to ${MAX_ID_LENGTH} characters.`,
    });
  }
  assertStorableString(id, 'id');
  // PGlite's decoder drops a leading byte-order mark from every text it reads: the id would come back as another.
  if (id.startsWith('\uFEFF'))
    throw new InvalidMessageError({ path: 'id', value: id, message: 'cannot start with U+FEFF.' });
  if (typeof role !== 'string' || !(MESSAGE_ROLES as readonly string[]).includes(role)) {
    throw new InvalidMessageError({
      path: 'role',
      value: role,
      message: `must be one of ${MESSAGE_ROLES.join(', ')}.`,
    });
  }
  const validParts = validateParts(parts, role);
  const validMetadata = validateMetadata(metadata);
  const partsJson = JSON.stringify(validParts);
  const metadataJson = JSON.stringify(validMetadata);
  const byteSize = Buffer.byteLength(partsJson) + Buffer.byteLength(metadataJson);
  if (byteSize > maxBytes) throw new MessageTooLargeError({ messageId: id, byteSize, limit: maxBytes });
  return {
    id,
    role: role as ValidatedMessage['role'],
    parts: validParts,
    metadata: validMetadata,
    partsJson,
    metadataJson,
    byteSize,
  };
}
