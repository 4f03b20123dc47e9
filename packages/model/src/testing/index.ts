/**
 * `@lethe/model/testing`: the shared policy matrix as a kit. `policyMatrixCases(provider,
 * { fixture })` runs a policy provider — an eviction policy, a compute policy or a read selector
 * — through every mode it accepts on a cache loop and on `generate()` with a tiny model, checking
 * the contract's promises (budget, anchors, indices or pages, seeding, isolation between
 * sequences, no tensor leak); any test runner runs its cases. The loops and checks are exported
 * for runtime-parity tests (a policy on the WebGPU device cache against the CPU).
 * `composedMatrixCases(parts)` runs compositions (`composePolicies`: an eviction policy with a
 * compute policy, a read selector with either) on `generate()`, every part checked as its own
 * matrix checks it, in one run.
 *
 * @packageDocumentation
 */
export {
  expectAnchorsKept,
  expectEveryEntryKept,
  expectValidDecision,
  expectWithinBudget,
  type FinalPositions,
  finalPositions,
  liveKeyNorms,
} from './cache-checks';
export { type ComposedOutcome, composedGenerateLoop } from './composed-loop';
export {
  COMPOSED_DEFAULT_MODES,
  type ComposedMatrixPart,
  composedMatrixCases,
  runComposedMatrix,
} from './composed-matrix';
export {
  type ComputeOutcome,
  computeGenerateLoop,
  controlsLoop,
  type PlainControls,
} from './compute-loops';
export { type GenerateOutcome, generateLoop, MATRIX_NEW_TOKENS } from './generate-loop';
export { kvCacheLoop, kvCacheLoopContext } from './kv-cache-loop';
export { PolicyMatrixFailure } from './matrix-failure';
export { MATRIX_TOKENIZER, matrixModel, matrixPrompts } from './matrix-model';
export {
  accepts,
  MATRIX_MODES,
  type MatrixMode,
  modeBound,
  modeBudget,
  modeForm,
  modeKind,
  modeReadPages,
  type ProviderKind,
  providerKind,
} from './matrix-modes';
export type { PolicyFixture } from './policy-fixture';
export {
  type PolicyMatrixCase,
  type PolicyMatrixOptions,
  policyMatrixCases,
  runPolicyMatrix,
} from './policy-matrix';
export {
  type LayerPages,
  type ReadOutcome,
  readCacheLoop,
  readGenerateLoop,
  type SelectedReads,
} from './read-loops';
