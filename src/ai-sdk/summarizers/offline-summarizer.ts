import type { ContextSummarizer, ContextSummarizerInput } from '../../context/contracts/context-summarizer.js';
import { summarySections } from '../../context/stages/summary-prompt.js';
import { toolOutputText } from '../../context/stages/preview-tool-output.js';

/** Options of {@link createOfflineSummarizer}. */
export interface CreateOfflineSummarizerOptions {
  /**
   * Items kept per section; the oldest go first.
   * @default 8
   */
  itemsPerSection?: number;
  /**
   * Characters of one item.
   * @default 160
   */
  itemCharacters?: number;
}

/**
 * A deterministic summarizer that needs no model, for tests and the offline demo. It extracts, per section:
 * Goals (what the user asked), Decisions (the assistant's answers), Facts (tool results), Completed actions
 * (tool calls and their outcome) and Open tasks (a request left unanswered, failed tool calls), merges them with
 * the previous summary's items (never nesting it), and keeps the newest `itemsPerSection` of each, within the
 * requested size.
 */
export function createOfflineSummarizer({
  itemsPerSection = 8,
  itemCharacters = 160,
}: CreateOfflineSummarizerOptions = {}): ContextSummarizer {
  const clip = (text: string) => {
    const line = text.replace(/\s+/g, ' ').trim();
    return line.length > itemCharacters ? `${line.slice(0, itemCharacters - 1)}…` : line;
  };
  return {
    id: 'offline',
    async summarize(input: ContextSummarizerInput) {
      const sections = parseSections(input.previousSummary);
      const add = (section: (typeof summarySections)[number], item: string) => {
        const clipped = clip(item);
        if (clipped === '') return;
        const list = sections.get(section)!;
        const existing = list.indexOf(clipped);
        if (existing >= 0) list.splice(existing, 1);
        list.push(clipped);
      };
      let openRequest: string | null = null;
      for (const message of input.messages) {
        const parts =
          typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
        for (const part of parts) {
          if (part.type === 'text' && message.role === 'user') {
            add('Goals', part.text);
            openRequest = part.text;
          } else if (part.type === 'text' && message.role === 'assistant') {
            add('Decisions', part.text);
            openRequest = null;
          } else if (part.type === 'tool-call') {
            add('Completed actions', `${part.toolName}(${JSON.stringify(part.input) ?? ''})`);
          } else if (part.type === 'tool-result') {
            const text = toolOutputText(part.output);
            if (
              part.output.type === 'error-text' ||
              part.output.type === 'error-json' ||
              part.output.type === 'execution-denied'
            )
              add('Open tasks', `${part.toolName} failed: ${text}`);
            else add('Facts', `${part.toolName}: ${text}`);
          }
        }
      }
      if (openRequest !== null) add('Open tasks', `Answer: ${openRequest}`);
      for (const list of sections.values()) list.splice(0, Math.max(0, list.length - itemsPerSection));
      const limit = input.maxOutputTokens * 3;
      let text = render(sections);
      while (text.length > limit) {
        const longest = [...sections.values()].reduce((a, b) => (b.length > a.length ? b : a));
        if (longest.length === 0) break;
        longest.shift();
        text = render(sections);
      }
      return text;
    },
  };
}

function parseSections(summary: string | null): Map<(typeof summarySections)[number], string[]> {
  const sections = new Map(summarySections.map((section) => [section, [] as string[]]));
  if (!summary) return sections;
  let current: string[] | undefined;
  for (const line of summary.split('\n')) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) {
      current = sections.get(heading[1] as (typeof summarySections)[number]);
      continue;
    }
    const item = /^-\s+(.*)$/.exec(line);
    if (item && current && item[1] !== 'None.') current.push(item[1]!);
  }
  return sections;
}

function render(sections: Map<string, string[]>): string {
  return [...sections]
    .map(
      ([section, items]) =>
        `## ${section}\n${items.length > 0 ? items.map((item) => `- ${item}`).join('\n') : '- None.'}`,
    )
    .join('\n\n');
}
