'use client';

import { useEffect, useState } from 'react';
import type { InspectorSnapshot, InspectorTurn } from '../../lib/inspector';

const COLORS: Record<string, string> = {
  instructions: '#7c3aed',
  tools: '#db2777',
  history: '#2563eb',
  input: '#059669',
  reserve: '#f59e0b',
  margin: '#9ca3af',
  free: '#e5e7eb',
};

const number = (value: number | null) => (value === null ? '–' : value.toLocaleString('en-US'));

/** The thread's stored runs and context snapshots, by turn, newest first (read back from the store). */
export function ContextInspector({ threadId, version }: { threadId: string; version: number }) {
  const [turns, setTurns] = useState<InspectorTurn[]>([]);
  useEffect(() => {
    let live = true;
    void fetch(`/api/threads/${threadId}/context`)
      .then((response) => (response.ok ? response.json() : { turns: [] }))
      .then((body: { turns?: InspectorTurn[] }) => live && setTurns(body.turns ?? []));
    return () => {
      live = false;
    };
  }, [threadId, version]);

  return (
    <>
      <h2>Context inspector</h2>
      <p className="hint">
        Each turn&rsquo;s runs as stored; a bar is a snapshot, written when the context manager compacted what the model
        was given (pruned, summarized, trimmed).
      </p>
      <div className="legend">
        {Object.entries(COLORS).map(([kind, color]) => (
          <span key={kind}>
            <i style={{ background: color }} /> {kind}
          </span>
        ))}
      </div>
      {turns.length === 0 && <p className="none">Send a message to see what the model is given at each turn.</p>}
      {turns.map((turn) => (
        <section key={turn.turn} className="run" data-testid="inspector-turn" data-turn={turn.turn}>
          <div className="run-title">Turn {turn.turn}</div>
          {turn.runs.map((run, index) => (
            <div key={run.id} className="run-line" data-testid="inspector-run">
              <span className={`run-status ${run.status}`}>run {index + 1}</span> {run.status}
              {run.inputTokens !== null && ` · read ${number(run.inputTokens)}`}
              {run.outputTokens !== null && ` · wrote ${number(run.outputTokens)} tokens`}
              {run.finishReason ? ` · ${run.finishReason}` : ''}
              {run.snapshots.map((snapshot) => (
                <SnapshotBar key={snapshot.version} snapshot={snapshot} />
              ))}
            </div>
          ))}
        </section>
      ))}
    </>
  );
}

function SnapshotBar({ snapshot }: { snapshot: InspectorSnapshot }) {
  const used = snapshot.contextWindow - (snapshot.segments.find((segment) => segment.kind === 'free')?.tokens ?? 0);
  return (
    <div className="step" data-testid="budget-bar">
      <span className="step-label">step {(snapshot.stepNumber ?? 0) + 1}</span>
      <div className="bar" title={snapshot.segments.map((segment) => `${segment.kind}: ${segment.tokens}`).join(', ')}>
        {snapshot.segments.map((segment) => (
          <div
            key={segment.kind}
            className="segment"
            data-kind={segment.kind}
            style={{
              width: `${(100 * segment.tokens) / Math.max(1, snapshot.contextWindow)}%`,
              background: COLORS[segment.kind],
            }}
          />
        ))}
      </div>
      <span className="step-used">
        {number(used)} / {number(snapshot.contextWindow)} tokens
        <span className="note" data-testid="context-note">
          snapshot v{snapshot.version}:{' '}
          {[...snapshot.compacted, `${snapshot.includedMessages} messages sent`].join(', ')}
          {snapshot.stale ? ' (stale)' : ''}
        </span>
      </span>
    </div>
  );
}
