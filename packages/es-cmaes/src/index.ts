/**
 * `@lethe/es-cmaes`: CMA-ES for any black-box minimisation problem — full CMA-ES with active
 * covariance update ({@link CMAES}), separable CMA-ES (`diagonal: true`), IPOP / BIPOP restarts
 * ({@link RestartCMAES}), box bounds by mirroring, ask / tell, the standard stopping criteria
 * by name, an {@link optimize} loop, and plain-JSON state that resumes bit-exactly. Float64Array
 * throughout, browser-safe, and its only dependency is `@lethe/core` (errors, validators, the
 * Philox RNG), itself dependency-free.
 *
 * @packageDocumentation
 */
export {
  type BoundHandling,
  type Bounds,
  type BoundsInput,
  clipIntoBounds,
  insideBounds,
  mirrorIntoBounds,
  resolveBounds,
} from './bounds';
export {
  type BestSolution,
  CMAES,
  CMAES_STATE_FORMAT,
  CMAES_STATE_FORMAT_V2,
  type CMAESState,
} from './cmaes';
export type { CovarianceModel, CovarianceState } from './covariance';
export { DiagonalCovariance } from './diagonal-covariance';
export { type SymmetricEigen, symmetricEigen } from './eigen';
export { FullCovariance } from './full-covariance';
export { ellipsoid, rastrigin, rosenbrock, sphere } from './functions';
export { type JsonNumber, MAGNITUDE_LIMIT } from './json';
export { NormalSampler } from './normal';
export {
  type OptimizeOptions,
  type OptimizeResult,
  type OptimizeStopReason,
  optimize,
  type Progress,
} from './optimize';
export type { CMAESConfig, CMAESConfigState, CMAESOptions } from './options';
export {
  ALPHA_COV,
  defaultPopulationSize,
  expectedNormalNorm,
  type StrategyParameterOptions,
  type StrategyParameters,
  strategyParameters,
} from './parameters';
export { rankFitness } from './ranking';
export {
  RESTART_STATE_FORMAT,
  RESTART_STATE_FORMAT_V2,
  type RestartState,
} from './restart-state';
export {
  RestartCMAES,
  type RestartOptions,
  type RestartPolicy,
  type RestartStopReason,
  type RestartStrategy,
  type RunRegime,
  type RunSummary,
} from './restarts';
export type {
  ResolvedStopping,
  StoppingOptions,
  StopReason,
  TerminationState,
} from './termination';
