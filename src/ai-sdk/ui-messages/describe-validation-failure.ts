import { TypeValidationError } from 'ai';

/** The first problem of a failed `safeValidateUIMessages`, told briefly. */
export interface ValidationFailure {
  /** Where the problem is, from the caller's name for the messages: `message.parts[1].data.percent`. */
  path: string;
  /** What is wrong there, without the value dump: `expected number, received string`. */
  reason: string;
  /** The value found at `path` in the messages as given (undefined when the path does not lead to one). */
  value: unknown;
}

type Segment = string | number;

// The AI SDK reports a part's or metadata's failure with `context.field` (`messages[0].parts[1].data`) and the
// schema's issues relative to it, and a structural failure with issues whose path starts at the message index.
function fieldSegments(field: string): Segment[] {
  return [...field.matchAll(/\[(\d+)\]|([^.[\]]+)/g)]
    .map((match) => (match[1] !== undefined ? Number(match[1]) : match[2]!))
    .slice(1); // drop the SDK's own `messages`
}

function issuePath(cause: unknown): Segment[] {
  const issues = (cause as { issues?: Array<{ path?: unknown[] }> } | undefined)?.issues;
  const path = issues?.[0]?.path ?? [];
  return path.filter((segment): segment is Segment => typeof segment === 'string' || typeof segment === 'number');
}

function issueMessage(cause: unknown): string | undefined {
  const issues = (cause as { issues?: Array<{ message?: unknown }> } | undefined)?.issues;
  const message = issues?.[0]?.message;
  return typeof message === 'string' ? message.replace(/^Invalid input: /, '') : undefined;
}

/**
 * The path, reason and value of a `safeValidateUIMessages` error, instead of its message, which repeats the whole
 * value and dumps the schema's issues as JSON. `name` is what the caller calls the messages (`message`, `history`):
 * a single message is `name`, one of several is `name[i]`.
 */
export function describeValidationFailure(error: unknown, name: string, messages: unknown[]): ValidationFailure {
  const context = TypeValidationError.isInstance(error) ? error.context : undefined;
  const cause = (error as { cause?: unknown }).cause;
  const segments = [...(context?.field ? fieldSegments(context.field) : []), ...issuePath(cause)];
  const [index, ...rest] = typeof segments[0] === 'number' ? segments : [undefined, ...segments];
  let path = index === undefined || messages.length === 1 ? name : `${name}[${index}]`;
  for (const segment of rest) path += typeof segment === 'number' ? `[${segment}]` : `.${segment}`;
  let value: unknown = index === undefined ? undefined : messages[index as number];
  for (const segment of rest) value = (value as Record<Segment, unknown> | null | undefined)?.[segment as Segment];
  const fallback = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
  return { path, reason: issueMessage(cause) ?? fallback, value };
}
