import { InvalidMessageError } from '../errors/invalid-message-error.js';

/**
 * The AI SDK v7 UI message part schema (`uiMessagesSchema` in `ai`'s `validate-ui-messages`), mirrored field by
 * field so the store refuses exactly what `validateUIMessages` refuses without importing `ai` at run time. A
 * property test (test/store/ui-part-rules.test.ts) generates valid and mutated parts and checks both agree.
 */
type Rule = (value: unknown, path: string) => void;
type Shape = Record<string, Rule>;

const fail = (path: string, value: unknown, message: string): never => {
  throw new InvalidMessageError({ path, value, message });
};
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const any: Rule = () => {};
/** `z.unknown()` as an object member: the key must be there (any value; `undefined` is not JSON). */
const present: Rule = (value, path) => {
  if (value === undefined) fail(path, value, 'is required in this state.');
};
const string: Rule = (value, path) => {
  if (typeof value !== 'string') fail(path, value, 'must be a string.');
};
const boolean: Rule = (value, path) => {
  if (typeof value !== 'boolean') fail(path, value, 'must be a boolean.');
};
const absent: Rule = (value, path) => {
  if (value !== undefined) fail(path, value, 'must not be set in this state.');
};
const optional =
  (rule: Rule): Rule =>
  (value, path) => {
    if (value !== undefined) rule(value, path);
  };
const oneOf =
  (...allowed: unknown[]): Rule =>
  (value, path) => {
    if (!allowed.includes(value))
      fail(path, value, `must be one of ${allowed.map((x) => JSON.stringify(x)).join(', ')}.`);
  };
const object =
  (shape: Shape): Rule =>
  (value, path) => {
    if (!isObject(value)) fail(path, value, 'must be an object.');
    for (const [key, rule] of Object.entries(shape)) rule((value as Record<string, unknown>)[key], `${path}.${key}`);
  };
const record =
  (rule: Rule): Rule =>
  (value, path) => {
    if (!isObject(value)) fail(path, value, 'must be an object.');
    for (const [key, item] of Object.entries(value as object)) if (key !== '__proto__') rule(item, `${path}.${key}`);
  };
const array =
  (rule: Rule): Rule =>
  (value, path) => {
    if (!Array.isArray(value)) fail(path, value, 'must be an array.');
    (value as unknown[]).forEach((item, index) => rule(item, `${path}[${index}]`));
  };

/** A JSON value (`jsonValueSchema`): object members may be undefined, array items may not. */
const json: Rule = (value, path) => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(path, value, 'must be a finite number.');
    return;
  }
  if (Array.isArray(value)) return array(json)(value, path);
  if (isObject(value)) return record(optional(json))(value, path);
  fail(path, value, 'must be a JSON value.');
};
const providerMetadata = optional(record(record(optional(json))));
const toolMetadata = optional(record(optional(json)));
const nonNegativeInteger: Rule = (value, path) => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    fail(path, value, 'must be a non-negative integer.');
};

const citation: Rule = (value, path) => {
  object({
    startIndex: optional(nonNegativeInteger),
    endIndex: optional(nonNegativeInteger),
    citedText: optional(string),
  })(value, path);
  const source = (value as Record<string, unknown>).source;
  const kind = isObject(source) ? source.sourceType : undefined;
  const common = { type: oneOf('source'), id: string, title: optional(string), providerMetadata };
  if (kind === 'url') return object({ ...common, url: string })(source, `${path}.source`);
  if (kind === 'document')
    return object({ ...common, mediaType: string, title: string, filename: optional(string) })(
      source,
      `${path}.source`,
    );
  fail(`${path}.source.sourceType`, kind, 'must be "url" or "document".');
};

const fileShape: Shape = {
  mediaType: string,
  filename: optional(string),
  url: string,
  providerReference: optional(record(string)),
  providerMetadata,
};
const steeringPart: Rule = (value, path) => {
  const type = isObject(value) ? value.type : undefined;
  if (type === 'text') return object({ text: string, providerMetadata })(value, path);
  if (type === 'file') return object(fileShape)(value, path);
  fail(`${path}.type`, type, 'must be "text" or "file".');
};

const STATIC_PARTS: Record<string, Shape> = {
  text: {
    text: string,
    citations: optional(array(citation)),
    state: optional(oneOf('streaming', 'done')),
    providerMetadata,
  },
  reasoning: { id: optional(string), text: string, state: optional(oneOf('streaming', 'done')), providerMetadata },
  custom: { kind: string, providerMetadata },
  'source-url': { sourceId: string, url: string, title: optional(string), providerMetadata },
  'source-document': {
    sourceId: string,
    mediaType: string,
    title: string,
    filename: optional(string),
    providerMetadata,
  },
  file: fileShape,
  'reasoning-file': { mediaType: string, url: string, providerMetadata },
  'steering-message': { id: string, parts: array(steeringPart) },
  'step-start': {},
};

const approvalRequested: Shape = {
  id: string,
  approved: absent,
  descriptor: any,
  requestReason: optional(string),
  reason: absent,
  isAutomatic: optional(boolean),
  signature: optional(string),
  inputSchemaInput: any,
};
const approvalResponded = (approved: Rule): Rule =>
  object({ ...approvalRequested, approved, reason: optional(string) });
const noResult: Shape = { output: absent, errorText: absent };
const TOOL_STATES: Record<string, Shape> = {
  'input-streaming': {
    ...noResult,
    rawInput: optional(string),
    inputEncoding: optional(oneOf('json', 'text')),
    approval: absent,
  },
  'input-available': { ...noResult, input: present, approval: absent },
  'approval-requested': { ...noResult, input: present, approval: object(approvalRequested) },
  'approval-responded': { ...noResult, input: present, approval: approvalResponded(boolean) },
  'output-available': {
    input: present,
    output: present,
    errorText: absent,
    resultProviderMetadata: providerMetadata,
    preliminary: optional(boolean),
    approval: optional(approvalResponded(oneOf(true))),
  },
  'output-error': {
    output: absent,
    errorText: string,
    resultProviderMetadata: providerMetadata,
    approval: optional(approvalResponded(oneOf(true))),
  },
  'output-denied': { ...noResult, input: present, approval: approvalResponded(oneOf(false)) },
};

function checkToolPart(part: Record<string, unknown>, path: string): void {
  const dynamic: Shape = part.type === 'dynamic-tool' ? { dynamic: optional(oneOf(false)), toolName: string } : {};
  // The fields of every state first, so that the error names a bad toolCallId even when the state is also wrong.
  object({
    toolCallId: string,
    title: optional(string),
    toolMetadata,
    providerExecuted: optional(boolean),
    callProviderMetadata: providerMetadata,
    ...dynamic,
  })(part, path);
  const stateShape =
    typeof part.state === 'string' ? Object.hasOwn(TOOL_STATES, part.state) && TOOL_STATES[part.state] : false;
  if (!stateShape) return fail(`${path}.state`, part.state, `must be one of ${Object.keys(TOOL_STATES).join(', ')}.`);
  object(stateShape)(part, path);
}

/**
 * Throws {@link InvalidMessageError} naming the path (`parts[2].state`) when `part` is not a part that the AI SDK's
 * `validateUIMessages` accepts (without the app's schemas: data and tool payloads are not checked here).
 */
export function checkUIMessagePart(part: unknown, path: string): void {
  if (!isObject(part)) return fail(path, part, 'must be an object.');
  const type = part.type;
  if (typeof type === 'string' && type.startsWith('data-'))
    return object({ id: optional(string), data: present })(part, path);
  if (typeof type === 'string' && (type.startsWith('tool-') || type === 'dynamic-tool'))
    return checkToolPart(part, path);
  const shape = typeof type === 'string' && Object.hasOwn(STATIC_PARTS, type) ? STATIC_PARTS[type] : undefined;
  if (!shape)
    return fail(
      `${path}.type`,
      type,
      'not a UI message part type (text, file, … or one starting with data- or tool-).',
    );
  object(shape)(part, path);
}
