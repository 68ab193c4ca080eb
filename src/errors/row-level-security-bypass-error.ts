import { AgentHistoryError } from './agent-history-error.js';

/**
 * The role the store's statements run as would not be held by row-level security: a superuser, a `BYPASSRLS`
 * role, the owner of a table whose row-level security is not forced, or a table without row-level security. Every
 * tenant could then read every other tenant's rows, so the store refuses to run (`rowLevelSecurityCheck: 'warn'`
 * only logs it). Nothing was read or written.
 */
export class RowLevelSecurityBypassError extends AgentHistoryError {
  /** The role the statements run as (`current_user` after the store switched to its `appRole`, if any). */
  readonly role: string;
  /** Why row-level security does not hold for it, one reason per entry. */
  readonly reasons: string[];
  constructor({ role, reasons }: { role: string; reasons: string[] }) {
    super({
      code: 'row-level-security-bypassed',
      message:
        `Row-level security does not hold for the role ${JSON.stringify(role)}: ${reasons.join('; ')}. ` +
        'Connect as a login that is neither superuser nor BYPASSRLS nor the tables’ owner, and give appRole.',
    });
    this.role = role;
    this.reasons = reasons;
  }
}
