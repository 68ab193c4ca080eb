import { describe, expect, it } from 'vitest';
import { createContextEngine, type FilterStageReport } from '../../../src/context/index.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import {
  assistant,
  reasoning,
  smallProfile,
  stepStart,
  storeOf,
  text,
  tokenCounter,
  user,
  words,
} from '../fixtures.js';

const turns = (count: number): ContextUIMessage[] =>
  Array.from({ length: count }, (_unused, turn) => [
    user(`u${turn}`, `Day ${turn}: what should we visit? ${words(60, `place${turn}`)}`),
    assistant(
      `a${turn}`,
      stepStart,
      reasoning(`thinking about day ${turn}`),
      text(`Visit museum ${turn}. ${words(30)}`),
    ),
  ]).flat();

const summarizer = { id: 'fake', summarize: async () => '## Goals\n- Plan the trip' };

describe('the context report', () => {
  it('should list a turn folded into a summary once (under summarize), not under select as well', async () => {
    for (const count of [6, 10, 16]) {
      const engine = createContextEngine({
        store: storeOf([...turns(count), user('q', 'And tomorrow?')]),
        profile: smallProfile(1200, 200),
        policy: { summary: { reserveTokens: 200 } },
        summarizer,
        tokenCounter,
        _internal: { now: () => 0 },
      });
      const { report } = await engine.buildInitialContext();
      const stage = (name: string) => report.stages.find((entry) => entry.stage === name)!;
      expect(stage('summarize')).toMatchObject({ status: 'created' });
      const summarized = stage('summarize').removed.map((removal) => removal.sequence);
      expect(summarized.length).toBeGreaterThan(0);
      const elsewhere = report.stages
        .filter((entry) => entry.stage !== 'summarize' && entry.stage !== 'prune')
        .flatMap((entry) => entry.removed.map((removal) => removal.sequence));
      expect(elsewhere.filter((sequence) => summarized.includes(sequence))).toEqual([]);
    }
  });

  it('should not count the answer being begun (pending, no parts) as a message the filter removed', async () => {
    const messages = [...turns(2), user('q', 'And tomorrow?'), assistant('answer'), assistant('old', text('partial'))];
    const statuses = { 5: 'pending', 6: 'streaming' } as const;
    const engine = createContextEngine({
      store: storeOf(messages, (index) => ({ status: statuses[index as 5 | 6] })),
      profile: smallProfile(8000, 200),
      tokenCounter,
      _internal: { now: () => 0 },
    });
    const { report } = await engine.buildInitialContext();
    const filter = report.stages.find((entry) => entry.stage === 'filter') as FilterStageReport;
    // The streaming message with parts is history left out (a crashed writer's, say); the placeholder is not.
    expect(filter.removed.map((removal) => [removal.sequence, removal.reason])).toEqual([[7, 'message-unfinished']]);
  });

  it('should not write a summary that the trim would drop at once', async () => {
    // The newest question nearly fills the budget: the summary the summarizer writes could not sit next to it.
    for (const size of [820, 860, 900]) {
      const store = storeOf([...turns(6), user('q', `Plan it all: ${words(size)}`)]);
      const engine = createContextEngine({
        store,
        profile: smallProfile(1200, 200),
        policy: { summary: { reserveTokens: 200 } },
        summarizer: { id: 'fake', summarize: async () => `## Goals\n- ${words(150, 'goal')}` },
        tokenCounter,
        _internal: { now: () => 0 },
      });
      const { report } = await engine.buildInitialContext();
      const removals = report.stages.flatMap((entry) => entry.removed.map((removal) => removal.reason));
      expect(removals).not.toContain('summary-dropped');
      expect(removals).toContain('turn-trimmed');
      expect(store.summaries).toEqual([]);
      expect(report.stages.find((entry) => entry.stage === 'summarize')).toMatchObject({
        status: 'failed',
        error: 'the summary does not fit next to the newest turn; nothing was written',
      });
    }
  });
});
