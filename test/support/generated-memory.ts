// Memory from outside the thread for generated conversations (test/support/agent-conversations.ts): a working-memory
// document and recalled items of random sizes, from a few tokens to more than the whole budget, and the checks that
// the context engine puts them first, whole, in their order (the working memory, then the items best first), drops
// them before any turn and never sends them over the budget.
import type { ModelMessage } from 'ai';
import type { ContextMemory, ContextRecalledItem } from '../../src/model/context-store.js';
import type { MemoryContextStore } from '../../src/testing/index.js';
import type { createRandom } from './agent-conversations.js';

const phrases = ['prefers trains', 'lives in Lyon', 'budget 3,000 EUR', '喜欢火车', 'uses metric units', 'vegetarian'];

/** Words of a phrase repeated to about `tokens` tokens. */
function textOf(random: ReturnType<typeof createRandom>, tokens: number): string {
  const phrase = random.pick(phrases);
  return Array.from({ length: Math.max(1, Math.ceil(tokens / 3)) }, (_unused, index) => `${phrase} ${index}`).join(
    '; ',
  );
}

/**
 * The memory of a generated conversation, or null (a third of them have none): a working memory (most often) and up
 * to six recalled items, each of a log-uniform size from 1 token to 1.5 times the budget.
 */
export function generateMemory(random: ReturnType<typeof createRandom>, budget: number): ContextMemory | null {
  if (random.chance(1 / 3)) return null;
  const size = () => random.logInt(1, Math.ceil(budget * 1.5));
  const workingMemory = random.chance(0.8)
    ? { id: 'working-memory-1', scope: 'user' as const, content: textOf(random, size()), version: random.int(1, 9) }
    : null;
  const recalled: ContextRecalledItem[] = Array.from({ length: random.int(0, 6) }, (_unused, index) => ({
    id: `recall-${index}`,
    sourceThreadId: 'other-thread',
    sourceMessageId: `other-${index}`,
    sourceSequence: index + 1,
    sourceContentVersion: random.int(1, 3),
    role: random.pick(['user', 'assistant'] as const),
    text: textOf(random, size()),
    score: random.int(0, 1000) / 1000,
    via: random.pick(['full-text', 'vector', 'both'] as const),
  }));
  // Best first, as a store returns them.
  recalled.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  return { workingMemory, recalled, recall: 'hybrid' };
}

/** Gives the in-memory store a `loadMemory` that returns a copy of `memory`. */
export function withGeneratedMemory(store: MemoryContextStore, memory: ContextMemory | null): MemoryContextStore {
  if (memory) store.loadMemory = async () => structuredClone(memory);
  return store;
}

const workingHeader = '[Working memory about';
const recalledHeader = '[Recalled from an earlier conversation';

/** Whether a message is the working memory or a recalled item (by the header the engine gives it). */
export function isMemoryMessage(message: ModelMessage): boolean {
  if (message.role !== 'user' || typeof message.content === 'string') return false;
  const first = message.content[0];
  return first?.type === 'text' && (first.text.startsWith(workingHeader) || first.text.startsWith(recalledHeader));
}

/**
 * What is wrong with the memory in one call's messages: memory after the first other message; a memory message that
 * is not one whole item; items out of order (the working memory, then the recalled items by score, ties by id) or not
 * the first ones of that order (an item kept while one before it was dropped).
 */
export function memoryProblems(messages: readonly ModelMessage[], memory: ContextMemory | null): string[] {
  const problems: string[] = [];
  const start = messages.findIndex((message) => !isMemoryMessage(message));
  const lead = start < 0 ? messages : messages.slice(0, start);
  if (messages.slice(lead.length).some(isMemoryMessage)) problems.push('memory after the history');
  if (lead.length > 0 && !memory) problems.push('memory without any loaded');
  const order = [
    ...(memory?.workingMemory ? [memory.workingMemory.content] : []),
    ...[...(memory?.recalled ?? [])]
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .map((item) => item.text),
  ];
  lead.forEach((message, index) => {
    const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
    const expected = order[index];
    if (expected === undefined || !text.endsWith(`${JSON.stringify(expected).slice(1, -1)}"}]`))
      problems.push(`memory message ${index} is not item ${index} whole`);
  });
  return problems;
}
