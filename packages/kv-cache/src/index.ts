/**
 * `@lethe/kv-cache`: a paged host-memory KV cache with ragged per-head live sets, provenance,
 * exact accounting, visibility traces (replay masks) and Quest's page key bounds; the policy API
 * that every eviction policy, compute policy and read selector of Lethe implements; and the
 * sparse-read functions (Quest's bound, SOL's κ read, entry ranges) runtimes share.
 *
 * @packageDocumentation
 */

export {
  type AttentionOperands,
  attentionWeights,
  exp32,
  laneAttention,
} from './attend/attention-lanes';
export { CacheAttention, type ChunkEntries, type HeadRead } from './attend/cache-attention';
export type { CacheStats } from './cache/accounting';
export type { GatherTarget, KVCacheStore } from './cache/cache-contract';
export { checkEntryVectors } from './cache/input-checks';
export { KVCache } from './cache/kv-cache';
export type { LayerView } from './cache/layer-view';
export {
  checkObservationNeeds,
  type ObservationServing,
} from './cache/observation-builder';
export {
  type CacheGeometryInput,
  cacheGeometry,
  DEFAULT_PAGE_SIZE,
  type KVCacheOptions,
} from './cache/options';
export {
  checkQueryWindow,
  MAX_QUERY_WINDOW_FLOATS,
  maxQueryWindow,
} from './cache/query-window';
export { CACHE_FORMAT_VERSION } from './cache/serialization';
export type { Anchors, CacheGeometry } from './geometry';
export type { AttentionGate } from './policy/attention-gate';
export { entriesAfterRound, roomyKeep } from './policy/budget-ceiling';
export { describeBudget } from './policy/budget-words';
export { checkObservation } from './policy/check-observation';
export {
  COMPOSITION_SEPARATOR,
  type ComposedPolicy,
  composePolicies,
  composePolicySets,
} from './policy/composed-policy';
export type {
  ComputeNeeds,
  ComputePolicy,
  ControlledAxes,
  LayerControls,
  StepObservation,
} from './policy/compute-policy';
export type { EvictionPolicy, KeepDecision, TriggerContext } from './policy/eviction-policy';
export { FULL_CACHE, fullCacheProvider } from './policy/full-cache-provider';
export {
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  type ObservedPageBounds,
} from './policy/observation';
export {
  budgetForm,
  isComputeBudget,
  isRateBudget,
  isReadBudget,
  requireCapacityBudget,
  validateComputeTargets,
  validatePolicyBudget,
} from './policy/policy-budget';
export {
  checkBaseModel,
  checkPolicyManifest,
  formatPolicyManifest,
  openPolicyDirectory,
  POLICY_FORMAT,
  POLICY_FORMAT_VERSION,
  POLICY_MANIFEST,
  type PolicyDirectory,
  type PolicyFiles,
  type PolicyManifest,
} from './policy/policy-directory';
export {
  checkPolicyContents,
  memoryPolicyDirectory,
  type PolicyContentsFields,
  type PolicyDirectoryContents,
  policyContents,
} from './policy/policy-directory-contents';
export {
  describePolicyOptions,
  type OptionDescription,
  parsePolicyOptions,
} from './policy/policy-options';
export {
  POLICY_NAME_PATTERN,
  PolicyRegistry,
  type PreparedPolicy,
  type PrepareRequest,
} from './policy/policy-registry';
export type { PromptConditioning } from './policy/prompt-conditioning';
export {
  type AnyPolicyProvider,
  type BudgetForm,
  type CapacityBudget,
  type ComputeBudget,
  type ComputeTargets,
  type LearnedParameters,
  MEMORY_BUDGET_FORMS,
  type PolicyBudget,
  type PolicyBuildRequest,
  type PolicyContext,
  type PolicyModelShape,
  type PolicyOptionsSchema,
  type PolicyProvider,
  type PolicySet,
  type ProviderOptions,
  type RateBudget,
  type ReadBudget,
} from './policy/provider';
export type { RandomSource } from './policy/random-source';
export type { ReadSelector } from './policy/read-selector';
export {
  type LayerRows,
  type LayerStep,
  type RoundQuery,
  type RoundRows,
  type RowRound,
  type RowSelector,
  type RowSelectorShape,
  type RowsToKeep,
  rowSelector,
} from './policy/row-selector';
export {
  checkRanges,
  intersectRanges,
  pageRanges,
  rangeLength,
} from './read/entry-ranges';
export { type PageKeyBounds, pageKeyBounds } from './read/page-key-bounds';
export {
  candidatePages,
  chosenPageRanges,
  type PageRanking,
  type TopPagesRead,
  topPagesMaxRead,
  topPagesRanges,
} from './read/page-ranking';
export { pageUpperBounds, type QuestGroupReduce, questPageScores } from './read/quest-bound';
export { DEFAULT_READ_ANCHORS, type ReadAnchors, resolveReadAnchors } from './read/read-anchors';
export {
  type TokenKeepRead,
  tokenKeepBudget,
  tokenKeepPageCount,
  tokenKeepRanking,
  tokenKeepRead,
} from './read/token-keep';
export * from './selection/index';
