export { type ContextBudget, type ComputeContextBudgetOptions, computeContextBudget } from './context-budget.js';
export { type ContextCalibrator, type CreateContextCalibratorOptions, createContextCalibrator } from './context-calibrator.js';
export { ContextEmptyError } from './context-empty-error.js';
export { type ContextEngine, type ContextInstructions, type CreateContextEngineOptions, createContextEngine } from './context-engine.js';
export { type ContextMeasure, type CreateContextMeasureOptions, createContextMeasure, estimateTokens, exactTokens } from './context-measure.js';
export {
  type ContextMemoryPolicy,
  type ContextPolicy,
  type ContextPolicyInput,
  type ContextPrunePolicy,
  type ContextSummaryPolicy,
  type ContextToolOutputPreviewPolicy,
  defaultContextPolicy,
  resolveContextPolicy,
} from './context-policy.js';
export { type ContextRemoval, type ContextRemovalReason } from './context-removal.js';
export { type ContextReport, type ContextSnapshotReport, type ContextStageReport, type MemoryStageReport, type SummarizeStageReport } from './context-report.js';
export {
  type ContextSegment,
  type ContextTurn,
  type MemorySegment,
  type MessageSegment,
  type SummarySegment,
  type MessageToolIds,
  createMessageSegment,
  estimateSegments,
  findCurrentInputIndex,
  groupTurns,
  hasUnfinishedToolWork,
  messageToolIds,
  renderSegments,
  tallySegments,
} from './context-segment.js';
export { type ContextSnapshotPruning, emptySnapshotPruning, readSnapshotPruning } from './context-snapshot-pruning.js';
export type {
  ContextStore,
  LoadedContext,
  NewContextSnapshot,
  NewContextSummary,
  StoredContextMessage,
  StoredContextMessageStatus,
  StoredContextSnapshot,
  StoredContextState,
  StoredContextSummary,
} from './context-store.js';
export { type ContextSummarizer, type ContextSummarizerInput } from './context-summarizer.js';
export { type ContextUIMessage, type ContextUIPart, getToolUIPartName, isToolUIPart } from './context-ui-message.js';
export { type ConvertStageReport, type ConvertToContextSegmentsOptions, convertToContextSegments } from './convert-to-context-segments.js';
export { type ConvertUIMessageOptions, type ToolOutputConversionInput, convertUIMessageToModelMessages } from './convert-ui-message.js';
export { type TokenTally, addTokenTallies, countModelMessageTokens, countModelMessagesTokens, emptyTokenTally } from './count-message-tokens.js';
export { countStoredMessageTokens, storedTokenCountId } from './count-stored-message-tokens.js';
export { type ClosedToolCall, type FilterStageReport, type FilterStoredMessagesOptions, filterStoredMessages } from './filter-stored-messages.js';
export { guardLongRuns } from './guard-long-runs.js';
export { type FindRelevantMemoryOptions, findRelevantMemory } from './find-relevant-memory.js';
export { hashContextMessages } from './hash-context-messages.js';
export { type AppendMemoryMessageInput, type CreateMemoryContextStoreOptions, type MemoryContextStore, createMemoryContextStore } from './memory-context-store.js';
export { type CreateMemorySegmentOptions, createMemorySegment } from './memory-segment.js';
export {
  type ModelFamily,
  type ModelProfile,
  type ModelProfileEntry,
  type ResolveModelProfileOptions,
  modelFamilyDefaults,
  modelProfileTable,
  resolveModelProfile,
} from './model-profile.js';
export { ModelProfileNotFoundError } from './model-profile-not-found-error.js';
export { type PreviewToolOutputOptions, previewToolOutput, toolOutputPreviewMarker, toolOutputText } from './preview-tool-output.js';
export { type ApplyContextPruningOptions, type ContextPruning, type PruneContextOptions, type PruneStageReport, applyContextPruning, pruneContext } from './prune-context.js';
export { type RebuildContextFromSnapshotOptions, rebuildContextFromSnapshot } from './rebuild-context-from-snapshot.js';
export { type SelectContextOptions, type SelectStageReport, selectContext } from './select-context.js';
export { type SummarizeContextOptions, type SummarizeContextResult, summarizeContext } from './summarize-context.js';
export { buildSummaryPrompt, renderSummaryTranscript, summarySections } from './summary-prompt.js';
export { createSummarySegment, renderSummaryText } from './summary-segment.js';
export { type TokenCounter, loadO200kTokenCounter, o200kTokenCounterId } from './token-counter.js';
export { type ToolDefinition, countToolDefinitionTokens, estimateToolDefinitionTokens } from './tool-definition-tokens.js';
export { type ApplyToolOutputPreviewsOptions, type ToolOutputPreview, type TrimContextOptions, type TrimStageReport, applyToolOutputPreviews, previewOversizedOutputs, trimContext } from './trim-context.js';
export { type PartMigration, type ValidateStageReport, validateStoredMessages } from './validate-stored-messages.js';
