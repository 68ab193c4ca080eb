import { customType } from 'drizzle-orm/pg-core';
import { sql, type AnyColumn, type SQL } from 'drizzle-orm';

/** A Postgres `tsvector` column (drizzle-orm 0.45 has no built-in one); read back as its text form. */
export const tsvector = customType<{ data: string; driverData: string }>({
  dataType: () => 'tsvector',
});

/**
 * The bytes of indexed text (its JSON form) indexed whole. A `tsvector` holds at most 1 MiB (SQLSTATE 54000 beyond):
 * distinct short words cost about 3 bytes of vector per byte of text (2.85 measured, distinct 3-character words),
 * so 250,000 bytes stays under 750 KB whatever the text.
 */
export const SEARCH_WHOLE_TEXT_BYTES = 250_000;
/** Beyond {@link SEARCH_WHOLE_TEXT_BYTES}, the characters of text indexed (at most about 7 bytes of vector each). */
export const SEARCH_TEXT_PREFIX_CHARACTERS = 100_000;

/**
 * The search vector of a message: its text parts (`'simple'` configuration, reasoning and tool traffic left out).
 * Text of more than {@link SEARCH_WHOLE_TEXT_BYTES} is indexed by its first {@link SEARCH_TEXT_PREFIX_CHARACTERS}
 * characters, so that any message the store accepts gets a vector instead of failing its insert. The search vector
 * trigger computes the same expression (for `indexPendingMessages` too); `searchMessages` uses this one for a row
 * stored without a vector. `parts` is read as jsonb, so the vector does not depend on the JSON's spacing or key order.
 */
export function searchVectorOf(parts: AnyColumn | SQL): SQL {
  const texts = sql`jsonb_path_query_array(${parts}::jsonb, 'strict $[*] ? (@.type == "text").text')`;
  // The cut text is JSON: its escaped line breaks and tabs become spaces, so that they still separate words.
  const plain = sql`replace(replace(replace(${texts}::text, '\\n', ' '), '\\r', ' '), '\\t', ' ')`;
  return sql`case when octet_length(${texts}::text) <= ${sql.raw(String(SEARCH_WHOLE_TEXT_BYTES))} then to_tsvector('simple'::regconfig, ${texts}) else to_tsvector('simple'::regconfig, left(${plain}, ${sql.raw(String(SEARCH_TEXT_PREFIX_CHARACTERS))})) end`;
}
