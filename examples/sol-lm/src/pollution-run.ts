import { logProbability, type PairedBootstrap, pairedBootstrap } from '@lethe/eval';
import type { ComputePolicy, LayerControls } from '@lethe/kv-cache';
import { type DecoderModel, GenerationSession } from '@lethe/model';

/** The knob one pollution run compresses, at its cheapest setting. */
export interface PollutionKnob {
  readonly axis: 'tokenKeep' | 'mlpInputKeep' | 'activationBits';
  readonly value: number;
}

/** What compressing one knob for a few steps did, against the dense run of the same tokens. */
export interface PollutionResult extends PollutionKnob {
  /** Whether the corrupted steps' KV entries were recomputed densely right after them. */
  readonly refreshed: boolean;
  /** Mean Δ NLL (nats per token) on the compressed steps: the direct cost. */
  readonly direct: number;
  /** Mean Δ NLL on the dense steps after them: the cost of the entries they wrote. */
  readonly tail: number;
  /**
   * Paired bootstraps over documents of each document's mean NLL on those steps against the
   * dense run's (10,000 resamples, seed 0): `direct`'s and `tail`'s 95 % intervals and p-values.
   */
  readonly directTest: PairedBootstrap;
  readonly tailTest: PairedBootstrap;
}

/**
 * A compute policy applying `controls` to every layer for the `corrupt` decode steps after
 * `start` (a token position), dense before and after; with `refresh`, its `refreshEvery` makes the
 * runtime recompute those steps' KV entries densely once they end (the prefill must then end at
 * `start`, so that the refresh boundary falls right after the corrupted steps).
 */
function corruptingPolicy(
  controls: LayerControls,
  start: number,
  corrupt: number,
  layers: number,
  refresh: boolean,
): ComputePolicy {
  const compressed = Array.from({ length: layers }, () => controls);
  const dense = Array.from({ length: layers }, () => undefined);
  return {
    name: 'pollution-probe',
    ...(refresh ? { refreshEvery: corrupt } : {}),
    controls: ({ step }) => (step >= start && step < start + corrupt ? compressed : dense),
  };
}

/** Per-token NLL of `tokens` (teacher-forced after a dense prefill of `prefill`) under `compute`. */
async function stepNll(
  model: DecoderModel,
  documents: readonly Int32Array[],
  prefill: number,
  steps: number,
  compute: ComputePolicy | undefined,
): Promise<Float64Array[]> {
  const session = new GenerationSession({ model, ...(compute === undefined ? {} : { compute }) });
  const all = documents.map((_, i) => i);
  let out = await session.prefill(documents.map((d) => d.subarray(0, prefill)));
  const nll = documents.map(() => new Float64Array(steps));
  for (let t = 0; t < steps; t++) {
    // The logits in hand predict token prefill + t; feeding it gives those of the next.
    documents.forEach((d, i) => {
      nll[i]![t] = -logProbability(out.logits[i]!, d[prefill + t]!);
    });
    out = await session.step(
      all,
      Int32Array.from(documents, (d) => d[prefill + t]!),
    );
  }
  return nll;
}

/**
 * KV pollution (the SOL paper's Fig. 7): each knob is set to its cheapest value for `corrupt`
 * decode steps after a dense prefill of `prefill` tokens, then the model runs densely for `tail`
 * more steps, without and with a dense KV refresh of the corrupted steps. Against the dense run
 * of the same documents, the mean Δ NLL of the corrupted steps is the direct cost and that of the
 * steps after is what the corrupted KV entries cost later (with the refresh, only the hidden
 * state carried over remains).
 */
export async function measurePollution(
  model: DecoderModel,
  documents: readonly Int32Array[],
  knobs: readonly PollutionKnob[],
  options: { readonly prefill: number; readonly corrupt: number; readonly tail: number },
): Promise<PollutionResult[]> {
  const { prefill, corrupt, tail } = options;
  const layers = model.config.num_hidden_layers;
  // Step t feeds token prefill + t; NLL index t is the prediction of token prefill + t, made by
  // step t − 1 (index 0 comes from the prefill). Corrupted steps feed tokens prefill … prefill +
  // corrupt − 1, so their predictions sit at indices 1 … corrupt.
  const steps = corrupt + tail + 1;
  const dense = await stepNll(model, documents, prefill, steps, undefined);
  const meanOver = (run: Float64Array, from: number, to: number) => {
    let sum = 0;
    for (let t = from; t < to; t++) sum += run[t]!;
    return sum / (to - from);
  };
  // Every document has the same steps, so the mean of the per-document differences is the mean
  // Δ over all of their tokens.
  const compare = (runs: Float64Array[], from: number, to: number) =>
    pairedBootstrap(
      runs.map((run) => meanOver(run, from, to)),
      dense.map((run) => meanOver(run, from, to)),
      { resamples: 10_000 },
    );
  const results: PollutionResult[] = [];
  for (const knob of knobs) {
    for (const refreshed of [false, true]) {
      const policy = corruptingPolicy(
        { [knob.axis]: knob.value },
        prefill,
        corrupt,
        layers,
        refreshed,
      );
      const runs = await stepNll(model, documents, prefill, steps, policy);
      const directTest = compare(runs, 1, corrupt + 1);
      const tailTest = compare(runs, corrupt + 1, steps);
      results.push({
        ...knob,
        refreshed,
        direct: directTest.meanDifference,
        tail: tailTest.meanDifference,
        directTest,
        tailTest,
      });
    }
  }
  return results;
}

/**
 * The pollution table: direct and tail Δ NLL per knob, without and with the refresh, each with
 * its 95 % paired-bootstrap interval over documents.
 */
export function pollutionMarkdown(results: readonly PollutionResult[]): string {
  const lines = [
    '| knob (cheapest) | direct Δ NLL | tail Δ NLL, no refresh | tail Δ NLL, refreshed |',
    '|---|--:|--:|--:|',
  ];
  const cell = (test: PairedBootstrap) =>
    `${test.meanDifference.toFixed(4)} (${test.low.toFixed(4)} – ${test.high.toFixed(4)})`;
  const knobs = results.filter((r) => !r.refreshed);
  for (const knob of knobs) {
    const refreshed = results.find((r) => r.refreshed && r.axis === knob.axis)!;
    lines.push(
      `| ${knob.axis} = ${knob.value} | ${cell(knob.directTest)} | ${cell(knob.tailTest)} | ${cell(refreshed.tailTest)} |`,
    );
  }
  lines.push(
    '',
    'Each cell: the mean Δ over documents and its 95 % paired-bootstrap interval (10,000 resamples).',
  );
  return `${lines.join('\n')}\n`;
}
