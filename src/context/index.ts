export {
  type ApplyContextPruningOptions,
  type ContextPruning,
  applyContextPruning,
} from './stages/apply-context-pruning.js';
export { type ApplyToolOutputPreviewsOptions, applyToolOutputPreviews } from './stages/apply-tool-output-previews.js';
export { type ToolOutputPreview } from './contracts/tool-output-preview.js';
export {
  type ContextBudget,
  type ComputeContextBudgetOptions,
  computeContextBudget,
} from './contracts/context-budget.js';
export {
  type ContextCalibrator,
  type CreateContextCalibratorOptions,
  createContextCalibrator,
} from '../tokens/context-calibrator.js';
export { ContextEmptyError } from './contracts/context-empty-error.js';
export { ContextBudgetExceededError } from './contracts/context-budget-exceeded-error.js';
export { type ContextEngine, createContextEngine } from './engine/context-engine.js';
export { type CreateContextEngineOptions } from './engine/create-context-engine-options.js';
export type { ContextInstructions } from './engine/estimate-prompt-overhead.js';
export {
  type ContextMeasure,
  type CreateContextMeasureOptions,
  createContextMeasure,
  estimateTokens,
  exactTokens,
} from '../tokens/context-measure.js';
export {
  type ContextMemoryPolicy,
  type ContextPolicy,
  type ContextPolicyInput,
  type ContextPrunePolicy,
  type ContextSummaryPolicy,
  type ContextToolOutputPreviewPolicy,
  defaultContextPolicy,
  resolveContextPolicy,
} from './contracts/context-policy.js';
export { type ContextRemoval, type ContextRemovalReason } from './segments/context-removal.js';
export { type ContextReport, type ContextSnapshotReport, type ContextStageReport } from './contracts/context-report.js';
export { type MemoryStageReport, type SummarizeStageReport } from './contracts/stage-reports.js';
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
} from './segments/context-segment.js';
export { contextMessageRef, contextMessageRefKey, withoutContextMessageRef } from './segments/context-message-ref.js';
export {
  type ContextSnapshotPruning,
  emptySnapshotPruning,
  readSnapshotPruning,
} from './engine/context-snapshot-pruning.js';
export type {
  ContextMessage,
  ContextMessageCache,
  ContextSnapshot,
  ContextStore,
  ContextSummary,
  LoadedContext,
  NewSnapshot,
  NewSummary,
} from '../model/context-store.js';
export type { ContextState, MessageStatus } from '../model/stored-rows.js';
export { type ContextSummarizer, type ContextSummarizerInput } from './contracts/context-summarizer.js';
export {
  type ContextUIMessage,
  type ContextUIPart,
  getToolUIPartName,
  isToolUIPart,
} from '../model/context-ui-message.js';
export { type ConvertStageReport } from './contracts/stage-reports.js';
export {
  type ConvertToContextSegmentsOptions,
  convertToContextSegments,
} from './stages/convert-to-context-segments.js';
export {
  type ConvertUIMessageOptions,
  type ToolOutputConversionInput,
  type ToolResultOutput,
  convertUIMessageToModelMessages,
} from '../tokens/convert-ui-message.js';
export {
  type TokenTally,
  addTokenTallies,
  countModelMessageTokens,
  countModelMessagesTokens,
  countModelPartTokens,
  emptyTokenTally,
} from '../tokens/count-message-tokens.js';
export {
  countStoredMessageTokens,
  countStoredPartTokens,
  storedTokenCountId,
} from '../tokens/count-stored-message-tokens.js';
export { type ClosedToolCall, type FilterStageReport } from './contracts/stage-reports.js';
export { type FilterStoredMessagesOptions, filterStoredMessages } from './stages/filter-stored-messages.js';
export { guardLongRuns } from '../tokens/guard-long-runs.js';
export { type FindRelevantMemoryOptions, findRelevantMemory } from './stages/find-relevant-memory.js';
export { hashContextMessages } from './engine/hash-context-messages.js';
export {
  formatContextBudgetBar,
  formatContextReport,
  type FormatContextBudgetBarOptions,
} from './engine/format-context-report.js';
export { type CreateMemorySegmentOptions, createMemorySegment } from './segments/memory-segment.js';
export type { ModelFamily } from '../tokens/model-id.js';
export {
  type ModelProfile,
  type ModelProfileEntry,
  type ResolveModelProfileOptions,
  modelFamilyDefaults,
  modelProfileTable,
  resolveModelProfile,
} from '../tokens/model-profile.js';
export { ModelProfileNotFoundError } from '../tokens/model-profile-not-found-error.js';
export {
  type PreviewToolOutputOptions,
  previewToolOutput,
  toolOutputPreviewMarker,
  toolOutputText,
} from './stages/preview-tool-output.js';
export {
  type PreviewToolInputOptions,
  previewToolInput,
  toolInputPreviewKey,
  toolInputPreviewMarker,
  toolInputText,
} from './stages/preview-tool-input.js';
export {
  type DroppedRound,
  type ShrinkResult,
  type TrimmedReasoning,
  applyRecordedShrinks,
  dropRounds,
  removeReasoning,
  roundKey,
  stripReasoning,
} from './stages/shrink-newest-turn.js';
export { type TrimResult } from './stages/create-trimmer.js';
export { type PruneContextOptions, pruneContext } from './stages/prune-context.js';
export { type PruneStageReport } from './contracts/stage-reports.js';
export {
  type RebuildContextFromSnapshotOptions,
  rebuildContextFromSnapshot,
} from './engine/rebuild-context-from-snapshot.js';
export { type SelectContextOptions, selectContext } from './stages/select-context.js';
export { type SelectStageReport } from './contracts/stage-reports.js';
export {
  type SummarizeContextOptions,
  type SummarizeContextResult,
  summarizeContext,
} from './stages/summarize-context.js';
export { buildSummaryPrompt, renderSummaryTranscript, summarySections } from './stages/summary-prompt.js';
export { createSummarySegment, renderSummaryText } from './segments/summary-segment.js';
export { type TokenCounter, loadO200kTokenCounter, o200kTokenCounterId } from '../tokens/token-counter.js';
export {
  type ToolDefinition,
  countToolDefinitionTokens,
  estimateToolDefinitionTokens,
} from '../tokens/tool-definition-tokens.js';
export { type TrimContextOptions, shrinkNewestTurn, trimContext } from './stages/trim-context.js';
export { type TrimStageReport } from './contracts/stage-reports.js';
export { validateStoredMessages } from './stages/validate-stored-messages.js';
export type { PartMigration } from '../model/message-shape-migrations.js';
export { type ValidateStageReport } from './contracts/stage-reports.js';
