/**
 * A tool output replaced by a preview of at most `maxTokens` raw tokens; with `part`, a tool call's input, or a
 * text or file part of an older turn (`previewContentPart`). The trim reports the previews it made, and a snapshot
 * records them (`ContextSnapshotPruning.previews`) so that a rebuild makes the same ones.
 */
export interface ToolOutputPreview {
  /** The call whose result (or input) was shortened; for `text`, the part's `contentPartKey`. */
  toolCallId: string;
  /** The preview's size limit. */
  maxTokens: number;
  /** What was shortened: the call's input, a text or file part, or (when absent) the call's output. */
  part?: 'input' | 'content';
  /**
   * The stored message the call is in (a provider may reuse a call id in another message, which keeps its own
   * output); null for a message not stored when the preview was made (a step of the request). Absent in a record
   * made before it was kept: the preview is then made of every call with the id.
   */
  sequence?: number | null;
}
