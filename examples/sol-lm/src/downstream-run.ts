import {
  type GenerationTask,
  type PairedAccuracy,
  pairedAccuracy,
  planGeneration,
  wilsonInterval,
} from '@lethe/eval';
import type { PolicyContext, PolicyRegistry, PreparedPolicy } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import type { ActionSet } from '@lethe/policies-sol';
import { evaluateGeneration, type GenerationEvaluation } from './generation-evaluation';
import { baselineOptions, controlledAxes, matchedBudget } from './matched-budget';
import { operatingPoint } from './operating-points';

/** One method at one operating point. */
export interface DownstreamMethod extends Omit<GenerationEvaluation, 'correct'> {
  readonly method: string;
  /** Wilson 95 % interval of the accuracy. */
  readonly interval: { readonly low: number; readonly high: number };
}

/** SOL and the fixed schedule at one operating point. */
export interface DownstreamPoint {
  readonly point: number;
  /** Requested `[C_κ, C_ρ, C_η]`. */
  readonly targets: [number, number, number];
  /** SOL, then the fixed schedule at SOL's realised usage. */
  readonly methods: [DownstreamMethod, DownstreamMethod];
  /** SOL against the fixed schedule, example by example. */
  readonly solVsFixed: PairedAccuracy;
}

/** A downstream study: the dense model's accuracy and every operating point. */
export interface Downstream {
  readonly dense: DownstreamMethod;
  readonly points: DownstreamPoint[];
}

/** What {@link runDownstream} needs. */
export interface DownstreamOptions {
  readonly model: DecoderModel;
  readonly task: GenerationTask;
  readonly context: PolicyContext;
  readonly registry: PolicyRegistry;
  /** The prepared SOL policy. */
  readonly sol: PreparedPolicy;
  /** The controller's action set (the fixed schedule uses the same). */
  readonly actions: ActionSet;
  /** Its horizon (the fixed schedule's episodes and refreshes match it). */
  readonly horizon: number;
  /** Held-out examples `0 … examples − 1` of seed 0. */
  readonly examples: number;
  readonly points: readonly number[];
  /** Prompts generated together. */
  readonly batchSize: number;
  readonly onProgress?: (line: string) => void;
}

/**
 * Fig. 6's comparison on a generation task: greedy completions of the held-out prompts by the
 * dense model, then at every operating point by SOL at the point's targets and by the fixed
 * (static) schedule at *SOL's realised per-axis usage* — a comparison at matched net keep-rate
 * — each verified by the task; SOL against the fixed schedule example by example (exact
 * McNemar).
 */
export async function runDownstream(options: DownstreamOptions): Promise<Downstream> {
  const { model, task, context, registry, actions, horizon, batchSize } = options;
  const plan = planGeneration(task, options.examples, 1, 0);
  const axes = controlledAxes(actions);
  const fixed = await registry.prepare('sol-fixed', {
    options: baselineOptions(actions, horizon),
  });
  try {
    const evaluate = (prepared: PreparedPolicy | undefined, budget?: { targets: object }) =>
      evaluateGeneration(
        model,
        task,
        plan,
        prepared === undefined ? {} : prepared.build(budget as never, context),
        axes,
        batchSize,
      );
    const dense = summary('dense', await evaluate(undefined));
    options.onProgress?.(`dense: accuracy ${dense.accuracy.toFixed(3)}`);
    const points: DownstreamPoint[] = [];
    for (const point of options.points) {
      const targets = operatingPoint(actions, point);
      const sol = await evaluate(options.sol, { targets });
      const matched = await evaluate(fixed, matchedBudget(sol.realised));
      const methods: [DownstreamMethod, DownstreamMethod] = [
        summary('sol', sol),
        summary('sol-fixed', matched),
      ];
      points.push({
        point,
        targets: [targets.tokenKeep, targets.mlpInputKeep, targets.precision],
        methods,
        solVsFixed: pairedAccuracy(sol.correct, matched.correct),
      });
      options.onProgress?.(
        `point ${point}: ${methods.map((m) => `${m.method} accuracy ${m.accuracy.toFixed(3)} nk ${m.netKeepRate.toFixed(3)}`).join(' | ')}`,
      );
    }
    return { dense, points };
  } finally {
    fixed.release();
  }
}

function summary(method: string, run: GenerationEvaluation): DownstreamMethod {
  const { correct, ...rest } = run;
  const interval = wilsonInterval(correct.filter(Boolean).length, correct.length);
  return { method, ...rest, interval: { low: interval.low, high: interval.high } };
}

const f = (x: number, digits = 3) => x.toFixed(digits);
const pct = (x: number) => `${(100 * x).toFixed(1)}`;

/** The study's tables: accuracy at matched net keep-rate with the paired test, adherence, cost. */
export function downstreamMarkdown({ dense, points }: Downstream): string {
  const lines = [
    '### Accuracy at matched net keep-rate (95 % Wilson interval; net keep-rate in parentheses)',
    '',
    `Dense model, same prompts: ${pct(dense.accuracy)} % (${pct(dense.interval.low)}–${pct(dense.interval.high)}).`,
    '',
    '| s | targets κ / ρ / η | SOL | fixed | only SOL / only fixed solved | McNemar p |',
    '|--:|---|--:|--:|--:|--:|',
  ];
  for (const p of points) {
    const [sol, fixed] = p.methods;
    const cell = (m: DownstreamMethod) =>
      `${pct(m.accuracy)} % (${pct(m.interval.low)}–${pct(m.interval.high)}; ${f(m.netKeepRate)})`;
    lines.push(
      `| ${p.point} | ${p.targets.map((t) => f(t)).join(' / ')} | ${cell(sol)} | ${cell(fixed)} | ${p.solVsFixed.onlyA} / ${p.solVsFixed.onlyB} | ${f(p.solVsFixed.pValue)} |`,
    );
  }
  lines.push(
    '',
    '### Budget adherence of SOL (requested → realised) and cost',
    '',
    '| s | κ | ρ | η | SOL tokens/s (controller share) | fixed tokens/s | generated tokens SOL / fixed |',
    '|--:|---|---|---|--:|--:|--:|',
  );
  for (const p of points) {
    const [sol, fixed] = p.methods;
    lines.push(
      `| ${p.point} | ${[0, 1, 2].map((axis) => `${f(p.targets[axis]!)} → ${f(sol.realised[axis]!)}`).join(' | ')} | ${f(sol.tokensPerSecond, 0)} (${f(100 * sol.controllerShare, 1)} %) | ${f(fixed.tokensPerSecond, 0)} | ${sol.generatedTokens} / ${fixed.generatedTokens} |`,
    );
  }
  lines.push('', `Dense: ${f(dense.tokensPerSecond, 0)} tokens/s.`, '');
  return `${lines.join('\n')}\n`;
}
