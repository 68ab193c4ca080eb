/** Every table of the package, in foreign-key order (parents first). */
export const TABLES = [
  'agent_thread',
  'agent_run',
  'agent_message',
  'agent_summary',
  'agent_context_snapshot',
  'agent_audit_event',
  'agent_stream_chunk',
] as const;

/** The name of one of the package's {@link TABLES}. */
export type TableName = (typeof TABLES)[number];
