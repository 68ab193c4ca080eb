import type { ChatMessage } from '../../lib/tools';
import { Markdown } from './markdown';
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
        <UsageLabel usage={message.metadata?.usage} />
      </div>
      {message.parts.map((part, index) => {
        switch (part.type) {
          case 'text':
            // Answers are Markdown (rendered safely); the user's words are shown as typed.
            return message.role === 'assistant' ? (
              <div key={index} className="text markdown" data-testid="message-text">
                <Markdown text={part.text} />
              </div>
            ) : (
              <p key={index} className="text plain" data-testid="message-text">
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

type Usage = NonNullable<NonNullable<ChatMessage['metadata']>['usage']>;

/**
 * What the answer cost, labelled so it does not read as the answer's length: the tokens the model was given (its
 * context, summed over the answer's steps) and the tokens it wrote.
 */
function UsageLabel({ usage }: { usage?: Usage }) {
  if (usage?.inputTokens === undefined && usage?.outputTokens === undefined) return null;
  const format = (value: number | undefined) => (value ?? 0).toLocaleString('en-US');
  return (
    <span
      className="usage"
      data-testid="usage"
      title="Tokens the model was given (summed over this answer's steps) and tokens it wrote"
    >
      context {format(usage.inputTokens)} tokens · answer {format(usage.outputTokens)}
    </span>
  );
}
