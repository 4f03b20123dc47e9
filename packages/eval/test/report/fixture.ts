import type { CellResult, SweepResults } from '../../src/harness/results';

/** Hand-picked numbers of one cell (means; standard errors and counts are derived below). */
interface CellNumbers {
  readonly accuracy?: number;
  readonly perplexity?: number;
  readonly peak: number;
  readonly live: number;
  readonly fullPeak: number;
  readonly netKeep?: number;
  readonly tokensPerSecond: number;
}

/** The three eviction policies of the fake sweep, besides the full cache. */
export const POLICIES = ['streaming-llm', 'h2o', 'snapkv'] as const;
/** The budgets of the fake sweep, besides the full cache's 1. */
export const BUDGETS = [0.25, 0.5, 0.75] as const;

const COUNTDOWN_EXAMPLES = 256;
const LM_DOCUMENTS = 64;

/**
 * A cell as the harness would write it. Accuracy is rounded to a whole number k of the n
 * examples solved (the first k: `sequences` lists every example's outcome) and its standard
 * error is the binomial one, √(p(1 − p)/(n − 1)); the other standard errors are small fixed
 * fractions of the mean.
 */
export function cell(
  task: string,
  policy: string,
  budget: number,
  numbers: CellNumbers,
  seed = 0,
): CellResult {
  const n = numbers.accuracy === undefined ? LM_DOCUMENTS : COUNTDOWN_EXAMPLES;
  const spread = (mean: number, fraction: number) => ({ mean, stderr: mean * fraction, n });
  const solved = numbers.accuracy === undefined ? 0 : Math.round(numbers.accuracy * n);
  const accuracy = numbers.accuracy === undefined ? undefined : solved / n;
  return {
    key: { task, policy, budget, seed },
    metrics: {
      ...(accuracy === undefined
        ? {}
        : {
            accuracy: {
              mean: accuracy,
              stderr: Math.sqrt((accuracy * (1 - accuracy)) / (n - 1)),
              n,
            },
            passAtK: { '1': accuracy },
          }),
      ...(numbers.perplexity === undefined
        ? {}
        : { perplexity: spread(numbers.perplexity, 0.015) }),
      ...(numbers.netKeep === undefined
        ? {}
        : {
            netKeepRate:
              policy === 'full' ? { mean: 1, stderr: 0, n } : spread(numbers.netKeep, 0.01),
          }),
      peakKvReduction:
        policy === 'full'
          ? { mean: 1, stderr: 0, n }
          : spread(numbers.fullPeak / numbers.peak, 0.02),
      realisedBudget:
        policy === 'full'
          ? { mean: 1, stderr: 0, n }
          : spread(numbers.peak / numbers.fullPeak, 0.02),
      meanLive: spread(numbers.live, 0.03),
      peakLive: spread(numbers.peak, 0.02),
      tokensPerSecond: spread(numbers.tokensPerSecond, 0.01),
    },
    ...(accuracy === undefined
      ? {}
      : {
          sequences: Array.from({ length: n }, (_, example) => ({
            example,
            correct: example < solved,
            peakTotal: numbers.peak,
            generated: 40,
          })),
        }),
    command:
      `lethe eval --task ${task} --policy ${policy} --budget ${budget} --seed ${seed} ` +
      `--examples ${n} --out runs/sweep-a`,
    elapsedMs: Math.round((n * 300 * 1000) / numbers.tokensPerSecond),
  };
}

/**
 * A realistic small sweep: Countdown (accuracy) and held-out language modelling (perplexity)
 * under the full cache and three eviction policies at three budgets, one seed. The full cache
 * of the language-modelling task reports no net keep-rate (the report places it at 1).
 */
export function fakeSweep(): SweepResults {
  const cd = (
    policy: string,
    budget: number,
    accuracy: number,
    peak: number,
    live: number,
    tps: number,
    netKeep: number,
  ) =>
    cell('countdown', policy, budget, {
      accuracy,
      peak,
      live,
      fullPeak: 4480,
      netKeep,
      tokensPerSecond: tps,
    });
  const lm = (
    policy: string,
    budget: number,
    perplexity: number,
    peak: number,
    live: number,
    tps: number,
    netKeep?: number,
  ) =>
    cell('lm', policy, budget, {
      perplexity,
      peak,
      live,
      fullPeak: 8192,
      tokensPerSecond: tps,
      ...(netKeep === undefined ? {} : { netKeep }),
    });
  return {
    format: 'lethe-eval-results',
    version: 2,
    config: {
      model: 'examples/quickstart/checkpoint',
      tasks: ['countdown', 'lm'],
      policies: ['full', ...POLICIES].map((name) => ({
        label: name,
        name,
        options: {},
        dir: null,
      })),
      budgets: [...BUDGETS],
      seeds: [0],
      examples: { countdown: COUNTDOWN_EXAMPLES, lm: LM_DOCUMENTS },
    },
    cells: [
      cd('full', 1, 0.512, 4480, 3120, 41.2, 1),
      cd('streaming-llm', 0.75, 0.402, 3392, 2650, 47.9, 0.81),
      cd('streaming-llm', 0.5, 0.281, 2272, 1880, 55.1, 0.62),
      cd('streaming-llm', 0.25, 0.094, 1152, 1010, 63.0, 0.38),
      cd('h2o', 0.75, 0.463, 3400, 2660, 44.8, 0.8),
      cd('h2o', 0.5, 0.377, 2280, 1890, 50.3, 0.61),
      cd('h2o', 0.25, 0.188, 1160, 1015, 57.6, 0.37),
      cd('snapkv', 0.75, 0.487, 3410, 2655, 45.5, 0.8),
      cd('snapkv', 0.5, 0.421, 2290, 1885, 51.2, 0.61),
      cd('snapkv', 0.25, 0.246, 1170, 1012, 58.4, 0.37),
      lm('full', 1, 6.84, 8192, 6144, 88.5),
      lm('streaming-llm', 0.75, 7.31, 6160, 5100, 101.7, 0.78),
      lm('streaming-llm', 0.5, 8.42, 4112, 3590, 117.4, 0.55),
      lm('streaming-llm', 0.25, 11.9, 2064, 1880, 133.0, 0.31),
      lm('h2o', 0.75, 7.02, 6176, 5110, 93.1, 0.77),
      lm('h2o', 0.5, 7.65, 4128, 3600, 104.9, 0.54),
      lm('h2o', 0.25, 9.83, 2080, 1890, 118.2, 0.3),
      lm('snapkv', 0.75, 6.97, 6180, 5108, 94.0, 0.77),
      lm('snapkv', 0.5, 7.48, 4130, 3598, 106.3, 0.54),
      lm('snapkv', 0.25, 9.21, 2082, 1888, 119.6, 0.3),
    ],
  };
}

/** The policies of {@link wideSweep}, besides the full cache. */
export const WIDE_POLICIES = ['snapkv', 'h2o', 'tova', 'knorm', 'l2norm'] as const;

/**
 * A sweep shaped like the main job's: retrieval (accuracy) and language modelling at budgets of
 * 10, 25 and 50% of the peak — realised budgets and peak KV entries span more than a factor of
 * 5, perplexities run from 1.9 to 120 — where knorm and l2norm give identical results and, on
 * retrieval, h2o and tova both score 0% at 10% and 25% (their points coincide, their caches do
 * not: different mean live entries).
 */
export function wideSweep(): SweepResults {
  const budgets = [0.1, 0.25, 0.5] as const;
  const scores: Record<(typeof WIDE_POLICIES)[number], [number[], number[]]> = {
    snapkv: [
      [0, 0.59, 0.81],
      [2.37, 1.92, 1.91],
    ],
    h2o: [
      [0, 0, 0.06],
      [69.7, 29.9, 9.97],
    ],
    tova: [
      [0, 0, 0.16],
      [7.59, 3.8, 2.63],
    ],
    knorm: [
      [0, 0, 0],
      [120.45, 82.9, 20.1],
    ],
    l2norm: [
      [0, 0, 0],
      [120.45, 82.9, 20.1],
    ],
  };
  const live: Record<(typeof WIDE_POLICIES)[number], number> = {
    snapkv: 0.9,
    h2o: 0.92,
    tova: 0.91,
    knorm: 0.93,
    l2norm: 0.93,
  };
  const retrievalPeak = 1140;
  const lmPeak = 1024;
  return {
    ...fakeSweep(),
    config: { ...fakeSweep().config, tasks: ['retrieval', 'lm'], budgets: [...budgets] },
    cells: [
      cell('retrieval', 'full', 1, {
        accuracy: 0.78,
        peak: retrievalPeak,
        live: 1120,
        fullPeak: retrievalPeak,
        tokensPerSecond: 1400,
      }),
      ...WIDE_POLICIES.flatMap((policy) =>
        budgets.map((budget, i) => {
          const peak = Math.round(budget * retrievalPeak * 1.02);
          return cell('retrieval', policy, budget, {
            accuracy: scores[policy][0][i]!,
            peak,
            live: peak * live[policy],
            fullPeak: retrievalPeak,
            tokensPerSecond: 2000,
          });
        }),
      ),
      cell('lm', 'full', 1, {
        perplexity: 1.91,
        peak: lmPeak,
        live: 514,
        fullPeak: lmPeak,
        tokensPerSecond: 3000,
      }),
      ...WIDE_POLICIES.flatMap((policy) =>
        budgets.map((budget, i) => {
          const peak = Math.round(budget * lmPeak);
          return cell('lm', policy, budget, {
            perplexity: scores[policy][1][i]!,
            peak,
            live: peak * 0.75,
            fullPeak: lmPeak,
            tokensPerSecond: 5000,
          });
        }),
      ),
    ],
  };
}
