import { AgentHistoryError, describeValue } from './agent-history-error.js';

/** The tenant id is missing or not a uuid. Raised before any SQL runs. */
export class InvalidTenantError extends AgentHistoryError {
  /** The tenant id that was refused. */
  readonly tenantId: unknown;
  constructor({ tenantId }: { tenantId: unknown }) {
    super({ code: 'tenant-invalid', message: `Invalid tenant id ${describeValue(tenantId)}: expected a uuid.` });
    this.tenantId = tenantId;
  }
}
