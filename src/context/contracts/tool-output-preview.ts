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
}
