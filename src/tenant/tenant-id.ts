import { isUuid } from '../errors/assert-input.js';
import { InvalidTenantError } from '../errors/invalid-tenant-error.js';

/** Returns the tenant id, lower-cased, or throws {@link InvalidTenantError} before any SQL runs. */
export function assertTenantId(tenantId: unknown): string {
  if (!isUuid(tenantId)) throw new InvalidTenantError({ tenantId });
  return tenantId.toLowerCase();
}
