import { AgentHistoryError, describeValue } from './agent-history-error.js';

/**
 * The store runs on a Citus coordinator whose session lacks a setting the store needs there. Raised in the
 * transaction's first statement, before any table is read: without it the workers would not see the tenant and
 * every read would come back empty.
 */
export class CitusSettingError extends AgentHistoryError {
  /** The setting to change, e.g. `citus.propagate_set_commands`. */
  readonly setting: string;
  /** Its value in the session the store used. */
  readonly value: unknown;
  /** The value the store needs. */
  readonly expected: string;
  constructor({ setting, value, expected }: { setting: string; value: unknown; expected: string }) {
    super({
      code: 'citus-setting-invalid',
      message:
        `Citus setting ${setting} is ${describeValue(value)} in the store's session; the store needs '${expected}' ` +
        `(without it the workers never see the tenant and every read comes back empty). ` +
        `Set it for the pool's login role: ALTER ROLE <login> SET ${setting} = '${expected}'.`,
    });
    this.setting = setting;
    this.value = value;
    this.expected = expected;
  }
}
