/**
 * The evaluation harness of `@lethe/eval`: a policy registry, budget semantics, validated
 * sweep configurations, the cell runner (batched generation and teacher-forced perplexity
 * under eviction, with accuracy, pass@k, peak-KV and keep-rate metrics), the results format,
 * and the `lethe eval` command that reproduces a cell. Sweeps (`runSweep`: results files,
 * checkpoint directories) are Node-only, in `./node` (`@lethe/eval/node`).
 *
 * @packageDocumentation
 */
export { planBatches } from './batching';
export {
  capacityFor,
  fullCacheLength,
  fullPeakPerHead,
  sequenceBudget,
  validateBudgetFraction,
} from './budget';
export { type CacheMetrics, cacheMetrics, kvEntryBytes, throughput } from './cache-metrics';
export type { CellEnvironment } from './cell-environment';
export {
  batchPolicies,
  type CellPolicy,
  cellBudgets,
  prepareCellPolicy,
} from './cell-policy';
export { runCell } from './cell-runner';
export { cellSettings } from './cell-settings';
export { cellId, sweepCells, validateCellKey } from './cells';
export { type Clock, systemClock } from './clock';
export { FullCacheReferences } from './full-reference';
export { runGenerationCell } from './generation-cell';
export {
  encodeText,
  type GenerationPlan,
  type GenerationRun,
  planGeneration,
  runGeneration,
} from './generation-run';
export {
  assertJson,
  canonicalJson,
  isPlainObject,
  type JsonValue,
  parseJsonFlag,
} from './json';
export { knownPolicies, type LeaderboardRoles, leaderboardRoles } from './known-policies';
export type { ModelProvider } from './model-provider';
export { parseIntegerFlag, parseNumberFlag } from './number-flag';
export { runPerplexityCell } from './perplexity-cell';
export { type PolicyFlags, policyFlagEntry, policyFlagWords } from './policy-flags';
export { listPolicies, type PolicyListing } from './policy-listing';
export {
  POLICY_LABEL_PATTERN,
  type PolicyPartSpec,
  type PolicySpec,
  policyParts,
  policySpec,
} from './policy-spec';
export { estimateRemainingMs, type ProgressCallback, type SweepProgress } from './progress';
export { encodePrompt } from './prompt-encoding';
export { liveTotal, ReadRecorder, type ReadTrace } from './read-trace';
export {
  cellConfig,
  EVAL_FLAGS,
  type EvalFlag,
  parseEvalFlags,
  reproduceCommand,
} from './reproduce';
export {
  type Aggregate,
  type CellKey,
  type CellMetrics,
  type CellResult,
  type DocumentOutcome,
  RESULTS_FORMAT,
  RESULTS_VERSION,
  type SequenceOutcome,
  type SweepResults,
} from './results';
export { checkResults, emptyResults, serializeResults } from './results-file';
export {
  type GeneratedSequence,
  type RolloutBatch,
  type RolloutOptions,
  rollout,
} from './rollout';
export {
  budgetsOf,
  checkpointOf,
  DEFAULT_BATCH_SIZE,
  EVERY_UNTRAINED_POLICY,
  type KnownNames,
  prefillChunkOf,
  rateEveryOf,
  type SweepConfig,
  type SweepSampling,
  seedsOf,
  type TaskSpec,
  taskLabel,
  validateSweepConfig,
} from './sweep-config';
export {
  logProbability,
  type ScoredDocument,
  type TeacherForcedBatch,
  type TeacherForceOptions,
  teacherForce,
} from './teacher-forcing';
