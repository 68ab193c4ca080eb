import { InvalidTenantError } from '../errors/invalid-tenant-error.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a uuid in its canonical text form. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Returns the tenant id, lower-cased, or throws {@link InvalidTenantError} before any SQL runs. */
export function assertTenantId(tenantId: unknown): string {
  if (!isUuid(tenantId)) throw new InvalidTenantError({ tenantId });
  return tenantId.toLowerCase();
}
