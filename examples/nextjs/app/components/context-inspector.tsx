'use client';

import { useEffect, useState } from 'react';
import type { ContextStepReport } from '../../lib/context-report';

const COLORS: Record<string, string> = {
  instructions: '#7c3aed',
  tools: '#db2777',
  history: '#2563eb',
  input: '#059669',
  reserve: '#f59e0b',
  margin: '#9ca3af',
  free: '#e5e7eb',
};

/** Each step's context budget as a stacked bar (newest run first). */
export function ContextInspector({ threadId, version }: { threadId: string; version: number }) {
  const [reports, setReports] = useState<ContextStepReport[]>([]);
  useEffect(() => {
    let live = true;
    void fetch(`/api/threads/${threadId}/context`)
      .then((response) => response.json())
      .then((body: { reports?: ContextStepReport[] }) => live && setReports(body.reports ?? []));
    return () => {
      live = false;
    };
  }, [threadId, version]);

  const runs = [...new Set(reports.map((report) => report.runId))].reverse().slice(0, 6);
  return (
    <aside className="inspector" data-testid="inspector">
      <h2>Context per step</h2>
      <div className="legend">
        {Object.entries(COLORS).map(([kind, color]) => (
          <span key={kind}>
            <i style={{ background: color }} /> {kind}
          </span>
        ))}
      </div>
      {runs.length === 0 && <p className="none">Send a message to see what the model is given at each step.</p>}
      {runs.map((runId, runIndex) => (
        <div key={runId} className="run">
          <div className="run-title">Turn {runs.length - runIndex}</div>
          {reports
            .filter((report) => report.runId === runId)
            .map((report) => (
              <div key={report.stepNumber} className="step" data-testid="budget-bar">
                <span className="step-label">step {report.stepNumber + 1}</span>
                <div
                  className="bar"
                  title={report.segments.map((segment) => `${segment.kind}: ${segment.tokens}`).join(', ')}
                >
                  {report.segments.map((segment) => (
                    <div
                      key={segment.kind}
                      className="segment"
                      data-kind={segment.kind}
                      style={{
                        width: `${(100 * segment.tokens) / report.contextWindow}%`,
                        background: COLORS[segment.kind],
                      }}
                    />
                  ))}
                </div>
                <span className="step-used">
                  {report.contextWindow - (report.segments.find((segment) => segment.kind === 'free')?.tokens ?? 0)} /{' '}
                  {report.contextWindow} tokens
                  {report.notes.map((note) => (
                    <span key={note} className="note" data-testid="context-note">
                      {note}
                    </span>
                  ))}
                </span>
              </div>
            ))}
        </div>
      ))}
    </aside>
  );
}
