/**
 * The evaluation harness of `@lethe/eval`: a policy registry, budget semantics, validated
 * sweep configurations, the cell runner (batched generation and teacher-forced perplexity
 * under eviction, with accuracy, pass@k, peak-KV and keep-rate metrics), resumable sweeps with
 * atomic results files, and the `lethe eval` command that reproduces a cell.
 *
 * @packageDocumentation
 */
export { planBatches } from './batching';
export { capacityFor, fullCacheLength, validateBudgetFraction } from './budget';
export { type CacheMetrics, cacheMetrics, throughput } from './cache-metrics';
export type { CellEnvironment } from './cell-environment';
export { runCell } from './cell-runner';
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
export { assertJson, canonicalJson, isPlainObject, type JsonValue } from './json';
export { checkpointModels, type ModelProvider } from './model-provider';
export { runPerplexityCell } from './perplexity-cell';
export {
  amortisationSlack,
  createDefaultRegistry,
  DEFAULT_SLACK_FRACTION,
  FULL_POLICY,
  type HeuristicFactoryOptions,
  heuristicFactory,
  type PolicyBudget,
  type PolicyContext,
  type PolicyFactory,
  PolicyRegistry,
} from './policy-registry';
export { estimateRemainingMs, type ProgressCallback, type SweepProgress } from './progress';
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
  RESULTS_FORMAT,
  RESULTS_VERSION,
  type SweepResults,
} from './results';
export {
  checkResults,
  emptyResults,
  readResultsFile,
  serializeResults,
  writeResultsFile,
} from './results-file';
export {
  type GeneratedSequence,
  type RolloutBatch,
  type RolloutOptions,
  rollout,
} from './rollout';
export { type RunSweepOptions, runSweep, type TaskFactory } from './sweep';
export {
  DEFAULT_BATCH_SIZE,
  type KnownNames,
  type SweepConfig,
  type SweepSampling,
  type TaskSpec,
  validateSweepConfig,
} from './sweep-config';
export {
  logProbability,
  type ScoredDocument,
  type TeacherForcedBatch,
  type TeacherForceOptions,
  teacherForce,
} from './teacher-forcing';
