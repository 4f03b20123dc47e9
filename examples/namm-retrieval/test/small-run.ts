import { join } from 'node:path';
import type { EvolveSettings } from '../src/evolve-run';

/** The committed retrieval model the example's tests evolve on. */
export const RETRIEVAL_MODEL = join(__dirname, '../../../models/retrieval');

/** A run small enough for a test: diagonal CMA-ES, an MLP scorer, 2 prompts a generation, one thread. */
export function smallRun(out: string, generations: number, population: number): EvolveSettings {
  return {
    model: RETRIEVAL_MODEL,
    out,
    generations,
    population,
    covariance: 'diagonal',
    promptsPerTask: 2,
    sigma0: 0.065,
    seed: 0,
    updateInterval: 64,
    capacity: undefined,
    scorer: 'mlp',
    features: 'spectrogram',
    threads: 1,
  };
}
