/** Every table of the package, in foreign-key order (parents first). */
export const TABLES = [
  'agent_thread',
  'agent_run',
  'agent_message',
  'agent_summary',
  'agent_context_snapshot',
  'agent_audit_event',
  'agent_stream_chunk',
  'agent_tool_payload',
  'agent_memory',
] as const;

/** The name of one of the package's {@link TABLES}. */
export type TableName = (typeof TABLES)[number];

/** The columns that order each table's rows in a dump (the chunk log and the tool payloads have no `id`). */
export const ROW_ORDER: Record<TableName, string> = {
  agent_thread: 'id',
  agent_run: 'id',
  agent_message: 'id',
  agent_summary: 'id',
  agent_context_snapshot: 'id',
  agent_audit_event: 'id',
  agent_stream_chunk: 'message_id, batch',
  agent_tool_payload: 'message_id, part, field, chunk',
  agent_memory: 'id',
};
