// The sessions the prompt-cache bench replays. A session is a list of turns; each turn is a user message, the
// model steps of its answer (each an assistant message with one tool call and the tool message with its result, as
// the AI SDK appends them between steps) and the assistant UIMessage a chat route stores when the answer ends.
import { convertToModelMessages, type ModelMessage, type UIMessage } from 'ai';
import { createRandom } from '../../test/support/agent-conversations.js';

export interface SessionTurn {
  /** The user message that starts the turn (stored before the first call). */
  user: UIMessage;
  /** The messages each step adds to the request, in order. */
  steps: ModelMessage[][];
  /** The answer as stored when the turn ends (undefined: the session ends inside the turn). */
  answer: UIMessage | undefined;
}

export interface Session {
  name: string;
  turns: SessionTurn[];
}

const line = 'row id=%d status=ok note=lorem ipsum dolor sit amet consectetur adipiscing elit';
const rows = (count: number) =>
  Array.from({ length: count }, (_row, row) => line.replace('%d', String(row))).join('\n');
const words = ['plan', 'check', 'the', 'report', 'table', 'before', 'deploy', 'result', 'numbers', 'again'];
const prose = (random: ReturnType<typeof createRandom>, count: number) =>
  Array.from({ length: count }, () => words[random.int(0, words.length - 1)]).join(' ');

/**
 * The 200-step tool loop: one user message, then one search call per step (most results 35–1,100 tokens, one in
 * twenty 7,000–22,000). The loop never ends inside the session, so nothing is stored after the first message.
 */
export function toolLoopSession(seed: number, steps: number): Session {
  const random = createRandom(seed);
  const loop = Array.from({ length: steps }, (_step, index) => {
    const toolCallId = `call-${index}`;
    const output = rows(random.chance(0.05) ? random.int(400, 1200) : random.int(2, 60));
    return [
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId, toolName: 'search', input: { query: `step ${index}` } }],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId, toolName: 'search', output: { type: 'text', value: output } }],
      },
    ] as ModelMessage[];
  });
  const user: UIMessage = {
    id: 'u0',
    role: 'user',
    parts: [{ type: 'text', text: 'Go through every page of the report.' }],
  };
  return { name: `tool loop, ${steps} steps`, turns: [{ user, steps: loop, answer: undefined }] };
}

/**
 * A chat with tools: `turns` user turns, each answered in 0–4 tool steps (results of 100–3,500 tokens, one in ten
 * 7,000–20,000), half of them with reasoning before the first call, and a closing text. The answer's model
 * messages at each step are the AI SDK's conversion of the assistant UIMessage so far, as the stored turn is later
 * converted.
 */
export async function chatSession(seed: number, turns: number): Promise<Session> {
  const random = createRandom(seed);
  const result: SessionTurn[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const user: UIMessage = {
      id: `u${turn}`,
      role: 'user',
      parts: [{ type: 'text', text: `Question ${turn}: ${prose(random, random.int(10, 120))}?` }],
    };
    const parts: UIMessage['parts'] = [];
    const steps: ModelMessage[][] = [];
    let sent = 0;
    const calls = random.int(0, 4);
    for (let call = 0; call < calls; call++) {
      parts.push({ type: 'step-start' });
      if (call === 0 && random.chance(0.5))
        parts.push({ type: 'reasoning', text: `Thinking: ${prose(random, random.int(80, 400))}.` });
      const lines = random.chance(0.1) ? random.int(400, 1100) : random.int(6, 200);
      parts.push({
        type: 'tool-search',
        toolCallId: `t${turn}-c${call}`,
        state: 'output-available',
        input: { query: `turn ${turn} call ${call}` },
        output: rows(lines),
      } as UIMessage['parts'][number]);
      const converted = await convertToModelMessages([{ role: 'assistant', parts }]);
      steps.push(converted.slice(sent));
      sent = converted.length;
    }
    parts.push(
      { type: 'step-start' },
      { type: 'text', text: `Answer ${turn}: ${prose(random, random.int(20, 200))}.` },
    );
    result.push({ user, steps, answer: { id: `a${turn}`, role: 'assistant', parts } });
  }
  return { name: `chat with tools, ${turns} turns`, turns: result };
}
