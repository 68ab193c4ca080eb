import { customType } from 'drizzle-orm/pg-core';

/** A Postgres `tsvector` column (drizzle-orm 0.45 has no built-in one); read back as its text form. */
export const tsvector = customType<{ data: string; driverData: string }>({
  dataType: () => 'tsvector',
});
