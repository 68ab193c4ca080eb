import { and, asc, eq } from 'drizzle-orm';
import { agentContextSnapshot, agentMessage, agentRun } from 'agent-history/schema';
import { readAsUser, turnIndex, userMessagesOf } from './turns';

/** One slice of a step's context budget, in tokens. */
export interface ContextBudgetSegment {
  kind: 'instructions' | 'tools' | 'history' | 'input' | 'reserve' | 'margin' | 'free';
  tokens: number;
}

/** A stored snapshot: the context was compacted for this step, and this is its budget. */
export interface InspectorSnapshot {
  version: number;
  stepNumber: number | null;
  /** Messages up to this sequence are summarized or trimmed away. */
  throughSequence: number;
  includedMessages: number;
  summarized: boolean;
  /** What the compaction did, from the snapshot's pruning record ("2 tool calls pruned", …). */
  compacted: string[];
  stale: boolean;
  contextWindow: number;
  segments: ContextBudgetSegment[];
}

/** A stored run (one model call loop), with the snapshots written while it ran. */
export interface InspectorRun {
  id: string;
  status: string;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  finishReason: string | null;
  startedAt: string;
  snapshots: InspectorSnapshot[];
}

/** A turn: the Nth question of the thread and the runs that answered it. */
export interface InspectorTurn {
  turn: number;
  runs: InspectorRun[];
}

/**
 * The thread's runs and context snapshots as stored (`agent_run`, `agent_context_snapshot`), read under the user's
 * row-level security and grouped by turn (lib/turns.ts): the same numbers after a reload or a server restart. A run
 * belongs to the turn of its answer message, or else (a continuation that appends nothing new) of the last question
 * asked before it started; a snapshot to the last run started before it was written.
 */
export async function readInspector(threadId: string): Promise<InspectorTurn[]> {
  const { users, runs, answers, snapshots } = await readAsUser(async (tx) => ({
    users: await userMessagesOf(tx, [threadId]),
    runs: await tx.select().from(agentRun).where(eq(agentRun.threadId, threadId)).orderBy(asc(agentRun.startedAt)),
    answers: await tx
      .select({ runId: agentMessage.runId, sequence: agentMessage.sequence })
      .from(agentMessage)
      .where(and(eq(agentMessage.threadId, threadId), eq(agentMessage.role, 'assistant')))
      .orderBy(asc(agentMessage.sequence)),
    snapshots: await tx
      .select()
      .from(agentContextSnapshot)
      .where(eq(agentContextSnapshot.threadId, threadId))
      .orderBy(asc(agentContextSnapshot.version)),
  }));
  const turnOf = turnIndex(users.map((user) => user.sequence));
  const turns = new Map<number, InspectorTurn>();
  const byRun = new Map<string, InspectorRun>();
  for (const run of runs) {
    const answer = answers.find((message) => message.runId === run.id);
    const turn = answer
      ? turnOf(answer.sequence)
      : users.filter((user) => user.createdAt.getTime() <= run.startedAt.getTime()).length;
    const entry: InspectorRun = {
      id: run.id,
      status: run.status,
      model: run.model,
      inputTokens: run.inputTokens,
      outputTokens: run.outputTokens,
      finishReason: run.finishReason,
      startedAt: run.startedAt.toISOString(),
      snapshots: [],
    };
    byRun.set(run.id, entry);
    const group = turns.get(turn) ?? { turn, runs: [] };
    group.runs.push(entry);
    turns.set(turn, group);
  }
  for (const snapshot of snapshots) {
    const owner = runs.filter((run) => run.startedAt.getTime() <= snapshot.createdAt.getTime()).at(-1);
    if (owner) byRun.get(owner.id)!.snapshots.push(toSnapshot(snapshot));
  }
  return [...turns.values()].sort((a, b) => b.turn - a.turn);
}

type SnapshotRow = typeof agentContextSnapshot.$inferSelect;

function toSnapshot(row: SnapshotRow): InspectorSnapshot {
  const budget = (row.budget ?? {}) as Record<string, number | undefined>;
  const tokens = (key: string) => Math.max(0, Number(budget[key] ?? 0));
  return {
    version: row.version,
    stepNumber: row.stepNumber,
    throughSequence: row.throughSequence,
    includedMessages: row.includedSequences.length,
    summarized: row.summaryId !== null,
    compacted: describePruning(row),
    stale: row.stale,
    contextWindow: tokens('contextWindow'),
    segments: [
      { kind: 'instructions', tokens: tokens('instructionsTokens') },
      { kind: 'tools', tokens: tokens('toolDefinitionsTokens') },
      { kind: 'history', tokens: tokens('historyTokens') },
      { kind: 'input', tokens: tokens('currentInputTokens') },
      { kind: 'reserve', tokens: tokens('maxOutputTokens') },
      { kind: 'margin', tokens: tokens('safetyMarginTokens') },
      { kind: 'free', tokens: tokens('remainingTokens') },
    ],
  };
}

const PRUNING_LABELS: Array<[key: string, one: string, many: string]> = [
  ['toolCallIds', 'tool call pruned', 'tool calls pruned'],
  ['previews', 'tool output shortened', 'tool outputs shortened'],
  ['reasoningSequences', 'reasoning dropped', 'reasonings dropped'],
  ['trimmedSequences', 'message trimmed', 'messages trimmed'],
  ['droppedRounds', 'tool round dropped', 'tool rounds dropped'],
];

/** The snapshot's pruning record (`ContextSnapshotPruning`, stored as JSON) in words. */
function describePruning(row: SnapshotRow): string[] {
  const pruned = (typeof row.pruned === 'object' && row.pruned !== null ? row.pruned : {}) as Record<string, unknown>;
  const done = PRUNING_LABELS.flatMap(([key, one, many]) => {
    const count = Array.isArray(pruned[key]) ? pruned[key].length : 0;
    return count > 0 ? [`${count} ${count === 1 ? one : many}`] : [];
  });
  if (row.summaryId !== null) done.unshift(`#1–${row.throughSequence} summarized`);
  return done;
}
