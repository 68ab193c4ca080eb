import { defineAgentTables, type AgentTables } from '../schema/define-agent-tables.js';

// The default instance, built on first use (not at import, so importing the package defines no tables).
let defaults: AgentTables | undefined;

/** The tables of `defineAgentTables()`, built once: what the store uses when given no `tables`. */
export function defaultTables(): AgentTables {
  defaults ??= defineAgentTables();
  return defaults;
}
