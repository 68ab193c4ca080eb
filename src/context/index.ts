// The context engine's public names, which `agent-history/ai-sdk` exports whole (src/ai-sdk/context-manager, next to
// `createContextManager`, which runs the engine): the engine and the types its public signatures name.
// Everything else in src/context is internal: other folders and the tests import it from its file.

// The engine and its options.
export { type ContextEngine, createContextEngine } from './engine/context-engine.js';
export type { CreateContextEngineOptions } from './engine/create-context-engine-options.js';
export type { ContextInstructions } from './engine/estimate-prompt-overhead.js';

// What the engine promises: the policy, the budget, the summarizer contract, the errors and the report.
export {
  type ContextMemoryPolicy,
  type ContextMemoryPolicyInput,
  type ContextRecallPolicy,
  type ContextPolicy,
  type ContextPolicyInput,
  type ContextPrunePolicy,
  type ContextSummaryPolicy,
  type ContextToolOutputPreviewPolicy,
  defaultContextPolicy,
  resolveContextPolicy,
} from './contracts/context-policy.js';
export {
  type ComputeContextBudgetOptions,
  type ContextBudget,
  computeContextBudget,
} from './contracts/context-budget.js';
export type { ContextSummarizer, ContextSummarizerInput } from './contracts/context-summarizer.js';
export { ContextEmptyError } from './contracts/context-empty-error.js';
export { ContextBudgetExceededError } from './contracts/context-budget-exceeded-error.js';
export type { ContextReport, ContextSnapshotReport, ContextStageReport } from './contracts/context-report.js';
export type {
  ClosedToolCall,
  ConvertStageReport,
  CarryStageReport,
  FilterStageReport,
  MemoryStageReport,
  MemorySegmentEntry,
  MemorySegmentsStageReport,
  PruneStageReport,
  SelectStageReport,
  SummarizeStageReport,
  TrimStageReport,
  ValidateStageReport,
} from './contracts/stage-reports.js';
export type { ToolOutputPreview } from './contracts/tool-output-preview.js';
export type { ContextRemoval, ContextRemovalReason } from './segments/context-removal.js';
export type { PartMigration } from '../model/message-shape-migrations.js';
export {
  type FormatContextBudgetBarOptions,
  formatContextBudgetBar,
  formatContextReport,
} from './engine/format-context-report.js';

// Snapshots: what one records beyond its sequences, and the rebuild of the context from it.
export type { ContextSnapshotPruning, SnapshotRecalledItem } from './engine/context-snapshot-pruning.js';
export type { SnapshotMemoryInput } from './engine/rebuild-memory-segments.js';
export type { DroppedRound, TrimmedReasoning } from './stages/shrink-newest-turn.js';
export {
  type RebuildContextFromSnapshotOptions,
  rebuildContextFromSnapshot,
} from './engine/rebuild-context-from-snapshot.js';

// What the budget is made of (src/tokens): model profiles, the calibrator, message conversion and counting, tool
// definitions. Exported with the engine, whose options and reports name them.
export {
  type ModelProfile,
  type ModelProfileEntry,
  type ResolveModelProfileOptions,
  modelProfileTable,
  resolveModelProfile,
} from '../tokens/model-profile.js';
export type { ModelFamily } from '../tokens/model-id.js';
export { ModelProfileNotFoundError } from '../tokens/model-profile-not-found-error.js';
export {
  type ContextCalibrator,
  type CreateContextCalibratorOptions,
  createContextCalibrator,
} from '../tokens/context-calibrator.js';
export {
  type ConvertUIMessageOptions,
  type ToolOutputConversionInput,
  type ToolResultOutput,
  convertUIMessageToModelMessages,
} from '../tokens/convert-ui-message.js';
export { type TokenTally, countModelMessageTokens } from '../tokens/count-message-tokens.js';
export {
  countStoredMessageTokens,
  countStoredPartTokens,
  storedTokenCountId,
} from '../tokens/count-stored-message-tokens.js';
export type { ToolDefinition } from '../tokens/tool-definition-tokens.js';
