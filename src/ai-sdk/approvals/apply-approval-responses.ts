import { InvalidMessageError } from '../../errors/invalid-message-error.js';
import { canonicalJson } from '../../context/engine/canonical-json.js';

type LoosePart = { type: string; state?: string; toolCallId?: string; approval?: LooseApproval } & Record<
  string,
  unknown
>;
type LooseApproval = { id?: unknown; approved?: unknown; reason?: unknown } & Record<string, unknown>;

/** What the client's copy of an assistant message answers, compared with the stored one. */
export interface AppliedApprovalResponses {
  /** The stored parts with the client's new responses applied (only `state` and `approval.approved/reason`). */
  parts: LoosePart[];
  /** How many responses are new (0: every response the client sent is stored already: a retry). */
  answered: number;
  /** Whether an approval of the message is still unanswered after these responses. */
  pending: boolean;
  /** How many responses contradict the response stored already (`approved` differs). */
  contradicted: number;
}

// The client's parts are checked by validateUIMessages first; this stays total on anything anyway.
const isTool = (part: LoosePart) =>
  typeof part === 'object' &&
  part !== null &&
  typeof part.type === 'string' &&
  (part.type === 'dynamic-tool' || part.type.startsWith('tool-'));
const responded = (part: LoosePart) => isTool(part) && part.state === 'approval-responded';
// Everything the client may not change: the part without its state and its approval.
const fixedFields = ({ state: _state, approval: _approval, ...rest }: LoosePart) => canonicalJson(rest);

/**
 * Applies the approval responses of the client's copy of an assistant message to the stored message. Only a
 * response to an approval the stored message requested is taken, and only its `approved` and `reason`; a
 * response to an id never requested, or any other difference from the stored parts, is an
 * {@link InvalidMessageError} naming the part (nothing is written).
 */
export function applyApprovalResponses(stored: LoosePart[], incoming: LoosePart[]): AppliedApprovalResponses {
  const responses = incoming.flatMap((part, index) => (responded(part) ? [{ part, index }] : []));
  if (responses.length === 0) {
    throw new InvalidMessageError({
      path: 'message.parts',
      value: undefined,
      message: 'an assistant message is accepted only with a tool approval response (state approval-responded).',
    });
  }
  let answered = 0;
  let contradicted = 0;
  for (const { part, index } of responses) {
    const approval = part.approval;
    // By call id and approval id: some providers reuse call ids across steps (`call_0`), approval ids are unique.
    const target = stored.find(
      (candidate) =>
        isTool(candidate) &&
        candidate.toolCallId === part.toolCallId &&
        typeof approval === 'object' &&
        approval !== null &&
        candidate.approval?.id === approval.id,
    );
    if (!target?.approval || typeof approval !== 'object' || approval === null) {
      throw new InvalidMessageError({
        path: `message.parts[${index}].approval.id`,
        value: part.approval?.id,
        message: 'no approval with this id was requested by this message.',
      });
    }
    if (typeof approval.approved !== 'boolean') {
      throw new InvalidMessageError({
        path: `message.parts[${index}].approval.approved`,
        value: approval.approved,
        message: 'expected true or false.',
      });
    }
    if (target.state === 'approval-requested') answered++;
    else if (target.approval.approved !== approval.approved) contradicted++;
  }
  if (answered === 0 || contradicted > 0)
    return { parts: stored, answered, pending: stored.some(isRequested), contradicted };
  if (incoming.length !== stored.length) {
    throw new InvalidMessageError({
      path: 'message.parts',
      value: incoming.length,
      message: `the message has ${stored.length} parts stored; only an approval response may change.`,
    });
  }
  const parts = stored.map((part, index) => mergePart(part, incoming[index]!, index));
  return { parts, answered, pending: parts.some(isRequested), contradicted };
}

const isRequested = (part: LoosePart) => isTool(part) && part.state === 'approval-requested';

function mergePart(stored: LoosePart, incoming: LoosePart, index: number): LoosePart {
  if (
    isRequested(stored) &&
    isTool(incoming) &&
    incoming.type === stored.type &&
    fixedFields(incoming) === fixedFields(stored)
  ) {
    if (incoming.state === 'approval-requested' && incoming.approval?.id === stored.approval?.id) return stored;
    if (responded(incoming)) {
      const { approved, reason } = incoming.approval!;
      const approval = { ...stored.approval, approved, ...(typeof reason === 'string' ? { reason } : {}) };
      return { ...stored, state: 'approval-responded', approval };
    }
  }
  if (canonicalJson(incoming) === canonicalJson(stored)) return stored;
  throw new InvalidMessageError({
    path: `message.parts[${index}]`,
    value: isTool(incoming) ? incoming.type : incoming,
    message: 'differs from the stored message; only a tool approval response may change.',
  });
}
