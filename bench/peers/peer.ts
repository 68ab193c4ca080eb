import type { BenchMessage } from '../messages.js';

/** One store measured by W1 / W2 (append side). Loads return ids oldest first. */
export interface AppendPeer {
  name: string;
  createThread(): Promise<string>;
  /** Persists one message; resolves once it is committed. */
  append(threadId: string, message: BenchMessage): Promise<void>;
  /**
   * Finishes what the store does after its appends in the background (agent-history's `search: 'background'`
   * drain), measured with them: the workload calls it after its clock stops and before its CPU and WAL meter does.
   */
  settle?(): Promise<void>;
  /** The thread's message ids, oldest first, through the store's own read API. */
  loadAllIds(threadId: string): Promise<string[]>;
  /** Direct SQL (superuser): the thread's message ids in server commit order (`pg_xact_commit_timestamp(xmin)`). */
  idsByCommit(threadId: string): Promise<string[]>;
  close(): Promise<void>;
}
