import type { ChatMessage } from '../../lib/tools';
import { ToolApproval, type ApprovalResponder } from './tool-approval';

const STATUS_LABELS: Record<string, string> = {
  cancelled: 'stopped',
  failed: 'failed',
  pending: 'writing…',
  streaming: 'writing…',
};

export function MessageView({
  message,
  status,
  streaming,
  respondToApproval,
}: {
  message: ChatMessage;
  status?: string;
  streaming: boolean;
  /** Answers a tool approval request (absent while an answer streams). */
  respondToApproval?: ApprovalResponder;
}) {
  const label = status ? STATUS_LABELS[status] : undefined;
  return (
    <div
      className={`message ${message.role}`}
      data-testid={`message-${message.role}`}
      data-message-id={message.id}
      data-status={status ?? ''}
    >
      <div className="role">
        {message.role === 'user' ? 'You' : 'Assistant'}
        {label && !streaming && (
          <span className={`badge ${status}`} data-testid="status-badge">
            {label}
          </span>
        )}
        {message.metadata?.usage?.totalTokens !== undefined && (
          <span className="usage">{message.metadata.usage.totalTokens} tokens</span>
        )}
      </div>
      {message.parts.map((part, index) => {
        switch (part.type) {
          case 'text':
            return (
              <p key={index} className="text" data-testid="message-text">
                {part.text}
              </p>
            );
          case 'reasoning':
            return (
              <p key={index} className="reasoning">
                {part.text}
              </p>
            );
          case 'tool-weather':
            return (
              <div key={index} className="tool" data-testid="tool-weather">
                weather({part.input?.city ?? '…'}){' '}
                {part.state === 'output-available'
                  ? `→ ${part.output.tempC}°C`
                  : part.state === 'output-error'
                    ? `✗ ${part.errorText}`
                    : '…'}
              </div>
            );
          case 'tool-sendReminder':
            return <ToolApproval key={index} part={part} respond={respondToApproval} />;
          default:
            return null;
        }
      })}
    </div>
  );
}
