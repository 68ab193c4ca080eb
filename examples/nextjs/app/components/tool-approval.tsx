import type { ChatMessage } from '../../lib/tools';

type ReminderPart = Extract<ChatMessage['parts'][number], { type: 'tool-sendReminder' }>;

/** What the user answers to an approval request: useChat's `addToolApprovalResponse`. */
export type ApprovalResponder = (response: { id: string; approved: boolean; reason?: string }) => void;

/**
 * A tool call that needs the user's approval: Approve / Deny while it is requested, then the stored outcome
 * (the route continues the same answer: the tool runs, or the model is told it was denied).
 */
export function ToolApproval({ part, respond }: { part: ReminderPart; respond?: ApprovalResponder }) {
  const text = part.input?.text ?? '…';
  return (
    <div className="tool approval" data-testid="tool-approval" data-state={part.state}>
      <span>reminder: “{text}”</span>{' '}
      {part.state === 'approval-requested' && (
        <span className="approval-actions">
          <button
            type="button"
            data-testid="approve"
            disabled={!respond}
            onClick={() => respond?.({ id: part.approval.id, approved: true })}
          >
            Approve
          </button>
          <button
            type="button"
            data-testid="deny"
            disabled={!respond}
            onClick={() => respond?.({ id: part.approval.id, approved: false, reason: 'The user said no.' })}
          >
            Deny
          </button>
        </span>
      )}
      {part.state === 'approval-responded' && (
        <span data-testid="approval-outcome">{part.approval.approved ? 'approved…' : 'denied…'}</span>
      )}
      {part.state === 'output-available' && <span data-testid="approval-outcome">✓ approved, reminder set</span>}
      {part.state === 'output-denied' && <span data-testid="approval-outcome">✗ denied, not run</span>}
      {part.state === 'output-error' && <span data-testid="approval-outcome">✗ {part.errorText}</span>}
    </div>
  );
}
