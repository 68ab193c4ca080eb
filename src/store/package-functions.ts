/** The package's functions, each called by the login before it switches role (or as itself). */
export const PACKAGE_FUNCTIONS = [
  'agent_history_append_message',
  'agent_history_append_messages',
  'agent_history_list_messages',
  'agent_history_list_messages_json',
  'agent_history_load_context_json',
  'agent_history_get_thread',
  'agent_history_start_run',
  'agent_history_finish_run',
  'agent_history_write_answer',
  'agent_history_write_snapshot',
  'agent_history_list_chat_messages',
] as const;
