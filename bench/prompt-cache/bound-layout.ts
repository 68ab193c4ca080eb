// The session as the prompt-cache bound sees it: every message of the session in its whole form (as it is sent the
// first time) and in its one pruned form, with their tokens; the removal frontiers each request may use; and the
// requests as prefixes of the session. `layoutRequest` builds the messages of one request from a strategy's state,
// so that a strategy the bound finds can be replayed through the bench's own tally.
import { convertToModelMessages, type ModelMessage, type UIMessage } from 'ai';
import { previewToolOutput } from '../../src/context/stages/preview-tool-output.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { fixedTokens, profile } from '../../test/support/check-generated-context.js';
import { countSentTokens } from '../../test/support/count-sent-tokens.js';
import type { Session } from './sessions.js';

/** The one form of a pruned message: its tool outputs previewed at `previewTokens`, or its tool traffic removed. */
export type PrunedForm = { previewTokens: number } | 'tool traffic removed';

/** The engine's first preview size: what an output too large for the budget is sent as, even when it is new. */
export const firstPreviewTokens = 1000;

export interface SessionLayout {
  /** Messages every request starts with and that never change (the loop's user message). */
  head: ModelMessage[];
  /** Tokens of the instructions, the tools and `head`. */
  fixed: number;
  /** Each message as it is sent whole, and its tokens. */
  whole: ModelMessage[];
  full: number[];
  /** Each message in its pruned form (null: removed), and its tokens. */
  prunedForm: (ModelMessage | null)[];
  pruned: number[];
  /** Per request: its number of messages, and how many of `cutPoints` it may remove up to. */
  requests: { end: number; cuts: number }[];
  /** Every removal frontier (a message index), ascending; `cutPoints[0]` is 0, nothing removed. */
  cutPoints: number[];
  /** Whether a message may be pruned the first time it is sent, when the request cannot fit otherwise. */
  pruneNew: boolean;
}

const size = (message: ModelMessage) => countSentTokens([message] as never, profile);

/** The message with its reasoning removed and its tool outputs in `form` (null when nothing is left). */
export function pruneMessage(message: ModelMessage, form: PrunedForm, tokenCounter: TokenCounter): ModelMessage | null {
  if (message.role === 'assistant' && typeof message.content !== 'string') {
    const content = message.content.filter(
      (part) => part.type !== 'reasoning' && !(form === 'tool traffic removed' && part.type === 'tool-call'),
    );
    return content.length === 0 ? null : { ...message, content };
  }
  if (message.role !== 'tool') return message;
  if (form === 'tool traffic removed') return null;
  return {
    ...message,
    content: message.content.map((part) =>
      part.type === 'tool-result'
        ? { ...part, output: previewToolOutput({ output: part.output, maxTokens: form.previewTokens, tokenCounter }) }
        : part,
    ),
  };
}

/** Every request of the session with no management: the stored turns converted, then each step's messages. */
export async function unmanagedRequests(session: Session): Promise<ModelMessage[][]> {
  const requests: ModelMessage[][] = [];
  const stored: UIMessage[] = [];
  for (const turn of session.turns) {
    stored.push(turn.user);
    let history = await convertToModelMessages(stored);
    for (let step = 0; step <= turn.steps.length; step++) {
      requests.push(history);
      history = [...history, ...(turn.steps[step] ?? [])];
    }
    if (turn.answer) stored.push(turn.answer);
  }
  return requests;
}

/**
 * The layout of a session from its unmanaged requests (each a prefix of the last). A session of one turn (the tool
 * loop) keeps its user message in `head` and removes whole rounds; a chat removes whole turns. The newest turn
 * (in one turn, the newest round) is never removed.
 */
export function sessionLayout(
  requests: readonly ModelMessage[][],
  form: PrunedForm,
  tokenCounter: TokenCounter,
  budget: number,
): SessionLayout {
  const last = requests.at(-1)!;
  // Requests share message objects within a turn: each is serialised once.
  const serialised = new WeakMap<ModelMessage, string>();
  const sent = (message: ModelMessage) => {
    let json = serialised.get(message);
    if (json === undefined) serialised.set(message, (json = JSON.stringify(message)));
    return json;
  };
  for (const request of requests)
    request.forEach((message, index) => {
      if (sent(message) !== sent(last[index]!)) throw new Error(`request message ${index} is not the session's`);
    });
  const oneTurn = last.filter((message) => message.role === 'user').length === 1;
  const head = oneTurn ? last.slice(0, 1) : [];
  const messages = last.slice(head.length);
  const fixed = fixedTokens + head.reduce((sum, message) => sum + size(message), 0);
  // An output that alone would not fit the budget is sent as the engine's first preview, even when it is new.
  const whole = messages.map((message) =>
    fixed + size(message) <= budget
      ? message
      : pruneMessage(message, { previewTokens: firstPreviewTokens }, tokenCounter)!,
  );
  const prunedForm = messages.map((message) => pruneMessage(message, form, tokenCounter));
  const isCut = (message: ModelMessage, index: number) =>
    index === 0 || message.role === (oneTurn ? 'assistant' : 'user');
  const cutPoints = messages.flatMap((message, index) => (isCut(message, index) ? [index] : []));
  return {
    head,
    fixed,
    whole,
    full: whole.map(size),
    prunedForm,
    pruned: prunedForm.map((message) => (message ? size(message) : 0)),
    cutPoints,
    pruneNew: form !== 'tool traffic removed',
    requests: requests.map((request) => {
      const end = request.length - head.length;
      let newest = end - 1;
      while (newest > 0 && !isCut(messages[newest]!, newest)) newest -= 1;
      return { end, cuts: Math.max(1, cutPoints.filter((cut) => cut <= newest).length) };
    }),
  };
}

/** A strategy's state at one request: removed before `cutPoints[cut]`, prunable messages below `rank` pruned. */
export interface LayoutState {
  cut: number;
  rank: number;
  summaryTokens: number;
}

/**
 * The messages of request `index` in `state`: the head, a summary of `summaryTokens` (the same text for the same
 * size, as a summary that stays is sent again unchanged), then the request's messages from the removal frontier,
 * the prunable ones below the frontier in their pruned form.
 */
export function layoutRequest(
  layout: SessionLayout,
  index: number,
  state: LayoutState,
  summaryText: (tokens: number) => string,
): ModelMessage[] {
  const prunable = layout.full.flatMap((tokens, message) => (layout.pruned[message]! < tokens ? [message] : []));
  const prunedBelow = state.rank < prunable.length ? prunable[state.rank]! : Infinity;
  const summary: ModelMessage[] =
    state.summaryTokens > 0 ? [{ role: 'user', content: summaryText(state.summaryTokens) }] : [];
  const kept: ModelMessage[] = [];
  for (let message = layout.cutPoints[state.cut]!; message < layout.requests[index]!.end; message++) {
    const chosen =
      message < prunedBelow && layout.pruned[message]! < layout.full[message]!
        ? layout.prunedForm[message]
        : layout.whole[message];
    if (chosen) kept.push(chosen);
  }
  return [...layout.head, ...summary, ...kept];
}
