import type { JsonValue } from '@lethe/eval';

/** The heuristics of the paper's Fig. 3 (§5.1), plus H2O, by provider name. */
export const BASELINE_HEURISTICS = ['streaming-llm', 'h2o', 'snapkv', 'keydiff', 'knorm'] as const;

/**
 * SnapKV's observation window in the comparison: the paper's w = 5 (§5.1) — its default under a
 * rate schedule (⌊16 / 4⌋ = 4) is not the paper's.
 */
export const SNAPKV_WINDOW = 5;

/** What the NGC Countdown evaluation compares (the flags of `npm run evaluate`). */
export interface EvaluationPlan {
  /** The task of the models (registry name and options, from the task model's manifest). */
  readonly task: { readonly name: string; readonly options: Readonly<Record<string, JsonValue>> };
  /** The full-cache RL model (`no-evict`): the heuristics run on it, and the upper bound. */
  readonly baseline: string;
  /** The SFT task model, evaluated with the full cache for context. */
  readonly base: string;
  /** NGC-trained runs by label: each is evaluated with NGC (greedy) as a learned policy. */
  readonly runs: readonly (readonly [string, string])[];
  /** Models the heuristics run on: `no-evict` and/or `sft`. */
  readonly heuristicsOn: readonly ('no-evict' | 'sft')[];
  /** Eviction rates ε per round. */
  readonly rates: readonly number[];
  /** Tokens between rounds (δ, prefill included). */
  readonly cadence: number;
  readonly examples: number;
  readonly evalSeed: number;
  readonly batchSize: number;
}

/** One harness sweep of the evaluation: the model it runs on, by label, and its config. */
export interface EvaluationSweep {
  /** `no-evict` or `sft`: the model the full cache and the heuristics run on. */
  readonly model: 'no-evict' | 'sft';
  /** A `SweepConfig` of `@lethe/eval` (JSON). */
  readonly config: Readonly<Record<string, JsonValue>>;
}

/**
 * A budget b = 1 − ε as a round decimal (1 − 0.3 is 0.7, not 0.7000000000000001), so the cell
 * keys and reproduce commands read as written.
 */
export function keepRatioOf(rate: number): number {
  return Number((1 - rate).toFixed(12));
}

/**
 * The evaluation as sweeps of the `@lethe/eval` harness under its rate schedule (`rateEvery`):
 * every δ tokens, prefill included, every method keeps ⌈(1 − ε)·live⌉ entries per KV head
 * (NGC: K = N − ⌊ε·N⌋ blocks, greedy top-K, with the b, w and logits its run was trained with,
 * from the run's `policy.json`) — the same rounds and the same fraction for all, so the
 * comparison isolates *what* is kept. Greedy decoding of the same held-out problems; each sweep
 * runs its model's full cache as the reference of its realised budgets.
 *
 * - `no-evict`: the full cache, the heuristics (when `heuristicsOn` has it) and every NGC run;
 * - `sft`: the full cache, and the heuristics when `heuristicsOn` has it.
 */
export function evaluationSweeps(plan: EvaluationPlan): EvaluationSweep[] {
  const heuristics = BASELINE_HEURISTICS.map((name) =>
    name === 'snapkv' ? { name, options: { windowSize: SNAPKV_WINDOW } } : name,
  );
  const shared = {
    tasks: [{ name: plan.task.name, options: plan.task.options }],
    budgets: plan.rates.map(keepRatioOf),
    rateEvery: plan.cadence,
    seeds: [plan.evalSeed],
    examplesPerCell: plan.examples,
    batchSize: plan.batchSize,
  };
  const sweep = (
    model: 'no-evict' | 'sft',
    dir: string,
    learned: JsonValue[],
  ): EvaluationSweep => ({
    model,
    config: {
      ...shared,
      policies: ['full', ...(plan.heuristicsOn.includes(model) ? heuristics : []), ...learned],
      checkpoints: { [plan.task.name]: dir },
    },
  });
  const ngc = plan.runs.map(([label, dir]) => ({ name: 'ngc', label, dir }));
  return [sweep('no-evict', plan.baseline, ngc), sweep('sft', plan.base, [])];
}
