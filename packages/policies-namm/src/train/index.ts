/**
 * `@lethe/policies-namm/train`: evolving a NAMM with CMA-ES on a frozen model (Cetin et al.,
 * §3.3, App. A.4) — task-agnostic ({@link NammTask}), fitness normalised by the full-cache
 * model, incremental stages, exact resume from plain-JSON checkpoints ({@link NammEvolution}),
 * population evaluation ({@link evaluatePopulation}) and the spectrogram normalisation
 * ({@link measureSpectrogramNormalization}). Browser-safe; needs the optional peer dependencies
 * `@lethe/model`, `@lethe/tensor` and `@lethe/es-cmaes`. The worker pool and the file writers
 * are in `@lethe/policies-namm/train/node`.
 *
 * @packageDocumentation
 */
export {
  evaluatePopulation,
  type PopulationEvaluator,
  type PopulationJob,
} from './evaluate-population';
export {
  checkEvaluationSettings,
  type NammEvaluationSettings,
  nammPolicyFor,
} from './evaluation-settings';
export type { NammGenerationRecord, NammProgress } from './evolution-record';
export { normalizedFitness } from './fitness';
export { generateCompletions } from './generate-completions';
export {
  type MeasureNormalizationOptions,
  measureSpectrogramNormalization,
} from './measure-normalization';
export {
  decodeNammCheckpoint,
  encodeNammCheckpoint,
  NAMM_CHECKPOINT_FORMAT,
  NAMM_CHECKPOINT_VERSION,
  type NammCheckpoint,
  type NammEvolutionSettings,
} from './namm-checkpoint';
export { NammEvolution, type NammTrainResult } from './namm-evolution';
export {
  DEFAULT_NAMM_POPULATION,
  DEFAULT_NAMM_SIGMA0,
  type NammEvolutionOptions,
} from './namm-evolution-options';
export type { NammTask } from './namm-task';
export type { NammCompletion, NammPromptRequest } from './prompt-request';
export type { NammStage } from './stages';
