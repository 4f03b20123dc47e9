/**
 * What one generation of NAMM evolution measured: a row of the history (the paper's Fig. 4:
 * the population's normalised batch performance, and the CMA-ES mean's per task). Fitness is
 * the normalised score averaged over the stage's tasks (1: the full cache's performance);
 * cache sizes are live KV entries at the end of each completion relative to the full cache's.
 */
export interface NammGenerationRecord {
  /** Generations completed, over all stages (1 after the first). */
  readonly generation: number;
  /** Index of the stage it belongs to. */
  readonly stage: number;
  /** Each member's fitness, in the order CMA-ES asked them; NaN where a score was not finite. */
  readonly fitness: readonly number[];
  /** Mean of the finite member fitnesses. */
  readonly fitnessMean: number;
  /** Their standard deviation (population). */
  readonly fitnessStd: number;
  /** The best of them. */
  readonly fitnessBest: number;
  /** The CMA-ES mean's normalised score on each of the stage's tasks, by task name. */
  readonly meanScores: Readonly<Record<string, number>>;
  /** The CMA-ES mean's fitness (the mean of `meanScores`). */
  readonly meanFitness: number;
  /** Relative cache size of the population, averaged over members and prompts. */
  readonly populationCacheSize: number;
  /** Relative cache size of the CMA-ES mean, averaged over prompts. */
  readonly meanCacheSize: number;
  /** The CMA-ES step size σ after the generation's update. */
  readonly sigma: number;
  /** Wall time of the generation, seconds. */
  readonly seconds: number;
}

/** A progress report after a generation. */
export interface NammProgress {
  /** Generations completed, over all stages. */
  readonly generation: number;
  /** Generations of every stage together. */
  readonly totalGenerations: number;
  /** Index of the generation's stage. */
  readonly stage: number;
  /** Best member fitness of the generation. */
  readonly bestFitness: number;
  /** Mean member fitness of the generation. */
  readonly meanFitness: number;
  /** The population's relative cache size. */
  readonly cacheSize: number;
  /** Wall time of the generation, seconds. */
  readonly seconds: number;
  /** Seconds left: this session's mean time per generation (checkpoint included) times the generations left. */
  readonly etaSeconds: number;
}
