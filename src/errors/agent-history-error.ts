const marker = Symbol.for('agent-history.error');

/** The base of every error this package throws. `AgentHistoryError.isInstance(e)` works across copies of the package. */
export class AgentHistoryError extends Error {
  /** A stable, noun-first code: 'tenant-invalid', 'thread-not-found', … */
  readonly code: string;

  constructor({ code, message, cause }: { code: string; message: string; cause?: unknown }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
    Object.defineProperty(this, marker, { value: true });
  }

  /** Whether `error` is one of this package's errors, also when it comes from another copy of the package. */
  static isInstance(error: unknown): error is AgentHistoryError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}

/**
 * Renders a value for an error message: quoted, and cut short when long. A function (a driver's client such as
 * postgres-js `sql`) is named, never printed as its source; an object JSON cannot render, by its class.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  let text: string;
  try {
    text =
      typeof value === 'string'
        ? JSON.stringify(value)
        : typeof value === 'number' && !Number.isFinite(value)
          ? String(value) // NaN, Infinity: JSON would say null
          : (JSON.stringify(value) ?? String(value));
  } catch {
    const className = (value as { constructor?: { name?: string } } | null)?.constructor?.name;
    text = typeof value === 'object' && className ? `[object ${className}]` : String(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
