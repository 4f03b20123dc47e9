import { holmAdjust, type PairedBootstrap, pairedBootstrap, pairedComparison } from '@lethe/eval';
import type { PolicyContext, PolicyRegistry, PreparedPolicy } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import type { ActionSet } from '@lethe/policies-sol';
import { type ComputeEvaluation, evaluateCompute } from './compute-evaluation';
import { baselineOptions, controlledAxes, matchedBudget } from './matched-budget';
import { operatingPoint } from './operating-points';

/** The baselines a frontier compares SOL with, by registry name. */
export const FRONTIER_BASELINES = ['sol-fixed', 'sol-emc', 'sol-dac'] as const;

/** Largest net keep-rate gap at which a random schedule counts as matched to SOL's. */
export const MATCHED_NET_KEEP = 0.02;

/** One method at one operating point: its evaluation, per-document perplexities included. */
export interface MethodResult extends ComputeEvaluation {
  readonly method: string;
}

/** Resamples of each paired bootstrap (seed 0), as the leaderboard's. */
export const BOOTSTRAP_RESAMPLES = 10_000;

/** SOL against one baseline at an operating point, on the same documents at SOL's budget. */
export interface BaselineComparison {
  /** A method of the point (`sol-fixed`, `sol-emc`, `sol-dac`) or `random`, the best matched one. */
  readonly baseline: string;
  /** Paired bootstrap of SOL − baseline per-document perplexity (negative: SOL lower). */
  readonly bootstrap: PairedBootstrap;
  /** Its p-value Holm-adjusted over every comparison of the frontier (points × baselines). */
  readonly holmP: number;
  /** Share of documents where SOL's perplexity is strictly lower. */
  readonly winRate: number;
}

/** Everything measured at one operating point. */
export interface FrontierPoint {
  /** The operating point `s`. */
  readonly point: number;
  /** Requested `[C_κ, C_ρ, C_η]`. */
  readonly targets: [number, number, number];
  /** SOL, then each baseline. */
  readonly methods: MethodResult[];
  /** SOL against each baseline and the best matched random schedule (Table 1, paired). */
  readonly comparisons: BaselineComparison[];
  /**
   * The best random schedule steered to SOL's realised budget, within {@link MATCHED_NET_KEEP}
   * of its net keep-rate, if any.
   */
  readonly bestRandom?: MethodResult & { readonly seed: number };
  /** Random schedules run, and those matched. */
  readonly randomRun: number;
  readonly randomMatched: number;
}

/** A frontier study: the dense model's reference and every operating point. */
export interface Frontier {
  /** The LM without compute policy, same documents and protocol. */
  readonly dense: MethodResult;
  readonly points: FrontierPoint[];
}

/** What {@link runFrontier} needs. */
export interface FrontierOptions {
  readonly model: DecoderModel;
  readonly context: PolicyContext;
  readonly documents: readonly Int32Array[];
  readonly prefill: number;
  readonly registry: PolicyRegistry;
  /** The prepared SOL policy. */
  readonly sol: PreparedPolicy;
  /** The controller's action set (the baselines use the same). */
  readonly actions: ActionSet;
  /** Its horizon (the baselines' episodes and refreshes match it). */
  readonly horizon: number;
  readonly points: readonly number[];
  /** Random schedules per point (seeds 0 … N − 1). */
  readonly randomSchedules: number;
  readonly onProgress?: (line: string) => void;
}

/**
 * Runs SOL at every operating point's targets, then — at SOL's realised per-axis usage, so that
 * every comparison is at a matched budget — the fixed schedule, EMC, DAC and the best of
 * `randomSchedules` random schedules steered to that budget (`sol-random-steered`; one counts
 * only within {@link MATCHED_NET_KEEP} of SOL's net keep-rate), all on the same documents under
 * the same protocol and action set; then compares SOL with each of them per document (paired
 * bootstrap, Holm over the whole frontier).
 */
export async function runFrontier(options: FrontierOptions): Promise<Frontier> {
  const { model, context, documents, prefill, registry, actions, horizon } = options;
  const axes = controlledAxes(actions);
  const sameSchedule = baselineOptions(actions, horizon);
  const baselines = await Promise.all(
    FRONTIER_BASELINES.map((name) => registry.prepare(name, { options: sameSchedule })),
  );
  const random = await registry.prepare('sol-random-steered', { options: sameSchedule });
  const evaluate = (prepared: PreparedPolicy, budget: { targets: object }, seed = 0) =>
    evaluateCompute(
      model,
      documents,
      prefill,
      prepared.build(budget as never, context),
      axes,
      seed,
    );
  const dense = {
    method: 'dense',
    ...(await evaluateCompute(model, documents, prefill, {}, axes, 0)),
  };
  const results: Omit<FrontierPoint, 'comparisons'>[] = [];
  const compared: { point: number; baseline: MethodResult; sol: MethodResult }[] = [];
  for (const point of options.points) {
    const targets = operatingPoint(actions, point);
    const sol = await evaluate(options.sol, { targets });
    const budget = matchedBudget(sol.realised);
    const evaluations: [string, ComputeEvaluation][] = [['sol', sol]];
    for (const [i, prepared] of baselines.entries()) {
      evaluations.push([FRONTIER_BASELINES[i]!, await evaluate(prepared, budget)]);
    }
    let best: (MethodResult & { seed: number }) | undefined;
    let matched = 0;
    for (let seed = 0; seed < options.randomSchedules; seed++) {
      const run = await evaluate(random, budget, seed);
      if (Math.abs(run.netKeepRate - sol.netKeepRate) > MATCHED_NET_KEEP) continue;
      matched += 1;
      if (best === undefined || run.perplexity < best.perplexity) {
        best = { method: 'random', seed, ...run };
      }
    }
    const methods = evaluations.map(([method, run]) => ({ method, ...run }));
    for (const baseline of [...methods.slice(1), ...(best === undefined ? [] : [best])]) {
      compared.push({ point, baseline, sol: methods[0]! });
    }
    results.push({
      point,
      targets: [targets.tokenKeep, targets.mlpInputKeep, targets.precision],
      methods,
      ...(best === undefined ? {} : { bestRandom: best }),
      randomRun: options.randomSchedules,
      randomMatched: matched,
    });
    options.onProgress?.(
      `point ${point}: ${methods.map((m) => `${m.method} ppl ${m.perplexity.toFixed(4)} nk ${m.netKeepRate.toFixed(3)}`).join(' | ')}${best === undefined ? '' : ` | best random ${best.perplexity.toFixed(4)}`}`,
    );
  }
  const tests = compared.map(({ sol, baseline }) =>
    pairedBootstrap(sol.perplexities, baseline.perplexities, { resamples: BOOTSTRAP_RESAMPLES }),
  );
  const holm = holmAdjust(tests.map((test) => test.pValue));
  const points = results.map((result) => ({
    ...result,
    comparisons: compared.flatMap(({ point, sol, baseline }, i) =>
      point === result.point
        ? [
            {
              baseline: baseline.method,
              bootstrap: tests[i]!,
              holmP: holm[i]!,
              winRate: pairedComparison(sol.perplexities, baseline.perplexities).winRate,
            },
          ]
        : [],
    ),
  }));
  return { dense, points };
}

const f = (x: number, digits = 3) => x.toFixed(digits);

/** A p-value with two significant digits (a bootstrap's smallest is 1 / (R + 1)). */
const pValue = (p: number) => (p < 0.001 ? p.toExponential(1) : p.toPrecision(2));

/** The study's tables: the frontier with paired statistics, budget adherence and cost. */
export function frontierMarkdown({ dense, points }: Frontier): string {
  const methods = points[0]?.methods.map((m) => m.method) ?? [];
  const lines = [
    '### Perplexity at each operating point (net keep-rate in parentheses)',
    '',
    `Dense model, same documents and protocol: perplexity ${f(dense.perplexity, 4)}.`,
    '',
    `| s | targets κ / ρ / η | ${methods.join(' | ')} | best random (matched / run) |`,
    `|--:|---|${methods.map(() => '--:').join('|')}|--:|`,
  ];
  for (const p of points) {
    const cells = p.methods.map((m) => `${f(m.perplexity, 4)} (${f(m.netKeepRate)})`);
    const random =
      p.bestRandom === undefined
        ? `— (0 / ${p.randomRun})`
        : `${f(p.bestRandom.perplexity, 4)} (${f(p.bestRandom.netKeepRate)}; ${p.randomMatched} / ${p.randomRun})`;
    lines.push(
      `| ${p.point} | ${p.targets.map((t) => f(t)).join(' / ')} | ${cells.join(' | ')} | ${random} |`,
    );
  }
  lines.push(
    '',
    '### SOL against each baseline at its budget, on the same documents',
    '',
    `Paired bootstrap of SOL − baseline per-document perplexity (${BOOTSTRAP_RESAMPLES.toLocaleString('en')} resamples, seed 0): mean difference, 95 % percentile interval and p-value, Holm-adjusted over every comparison below; a verdict needs an adjusted p ≤ 0.05.`,
    '',
    '| s | baseline | SOL − baseline | 95 % interval | p | Holm p | SOL wins | verdict |',
    '|--:|---|--:|---|--:|--:|--:|---|',
  );
  for (const p of points) {
    for (const c of p.comparisons) {
      const b = c.bootstrap;
      const verdict =
        c.holmP > 0.05 ? 'not told apart' : b.meanDifference < 0 ? 'SOL lower' : 'SOL higher';
      lines.push(
        `| ${p.point} | ${c.baseline} | ${f(b.meanDifference, 4)} | ${f(b.low, 4)} – ${f(b.high, 4)} | ${pValue(b.pValue)} | ${pValue(c.holmP)} | ${Math.round(c.winRate * 100)} % | ${verdict} |`,
      );
    }
  }
  lines.push(
    '',
    '### Budget adherence of SOL (requested → realised)',
    '',
    '| s | κ | ρ | η |',
    '|--:|---|---|---|',
  );
  const errors: number[] = [];
  for (const p of points) {
    const sol = p.methods[0]!;
    lines.push(
      `| ${p.point} | ${[0, 1, 2].map((axis) => `${f(p.targets[axis]!)} → ${f(sol.realised[axis]!)}`).join(' | ')} |`,
    );
    for (let axis = 0; axis < 3; axis++) {
      if (p.targets[axis]! < 1) errors.push(Math.abs(sol.realised[axis]! - p.targets[axis]!));
    }
  }
  const mae = errors.length === 0 ? 0 : errors.reduce((a, b) => a + b, 0) / errors.length;
  lines.push(
    '',
    `Mean absolute error over the controlled axes: ${f(mae, 4)}.`,
    '',
    '### Cost: scored tokens per second (share of the time in the compute policy)',
    '',
    `Dense: ${f(dense.tokensPerSecond, 0)} tokens/s.`,
    '',
    `| s | ${methods.join(' | ')} |`,
    `|--:|${methods.map(() => '--:').join('|')}|`,
  );
  for (const p of points) {
    lines.push(
      `| ${p.point} | ${p.methods.map((m) => `${f(m.tokensPerSecond, 0)} (${f(100 * m.controllerShare, 1)} %)`).join(' | ')} |`,
    );
  }
  lines.push('');
  return `${lines.join('\n')}\n`;
}
