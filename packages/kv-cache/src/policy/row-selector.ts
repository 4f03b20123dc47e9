import { assertInteger, LetheError } from '@lethe/core';
import { indexKeepMask } from '../cache/keep-mask';
import type { Anchors } from '../geometry';
import { anchorMask } from '../selection/anchors';
import { checkObservation } from './check-observation';
import type { EvictionPolicy, KeepDecision } from './eviction-policy';
import type { LayerObservation, ObservationNeeds } from './observation';
import type { RandomSource } from './random-source';

/** The shape of the model a {@link rowSelector} serves. */
export interface RowSelectorShape {
  readonly layers: number;
  readonly kvHeads: number;
  readonly queryHeads: number;
  readonly headDim: number;
}

/** Which step of which layer a runtime reports to a {@link rowSelector}. */
export interface LayerStep {
  /** Layer index. */
  readonly layer: number;
  /** Tokens this layer has processed so far (prompt and generated), e.g. the sequence length. */
  readonly step: number;
  /** Tokens processed since the previous report for this layer (default 1). */
  readonly newTokens?: number;
}

/** What {@link RowSelector.due} reads: a step and the live row counts, no row data. */
export interface RoundQuery extends LayerStep {
  /** Live rows per KV head after the step, `[kvHeads]`. */
  readonly liveCounts: ArrayLike<number>;
}

/**
 * A layer's own live rows per KV head, as plain arrays: what a round reads. Only what the round
 * asks for is required ({@link RowRound}: `window`, `gates`, `needs`).
 */
export interface RoundRows {
  /** Token position of each live row, per KV head, increasing. */
  readonly positions: readonly Int32Array[];
  /** Tokens processed since each row was written, per KV head (default `step − 1 − position`). */
  readonly ages?: readonly Int32Array[];
  /**
   * The gate `g` stored with each row, per KV head (GSA): required when the policy carries a
   * `gate`, passed to any other policy when given.
   */
  readonly gates?: readonly Float32Array[];
  /** Keys after RoPE, per KV head `[live, headDim]`, when `needs.keys`. */
  readonly keys?: readonly Float32Array[];
  /** Values, per KV head `[live, headDim]`, when `needs.values`. */
  readonly values?: readonly Float32Array[];
  /**
   * Queries after RoPE of the last `n ≥ window` tokens, `[n, queryHeads, headDim]`, oldest first
   * (optional: no Lethe eviction policy reads them); the round reads the last `window`.
   */
  readonly queries?: Float32Array;
  /**
   * Softmax attention of the last `n ≥ window` queries over each head's live rows,
   * `[n, queryHeads, maxLive]` (causal, padding 0), when the round's `window` is positive; the
   * round reads the last `window` (a one-call report may pass `min(needs.attentionWindow, step)`).
   */
  readonly attention?: Float32Array;
  /** Attention received per row, per KV head, when `needs.accumulatedAttention`. */
  readonly accumulatedAttention?: readonly Float32Array[];
  /** Queries that saw each row, per KV head, with `accumulatedAttention`. */
  readonly attentionCounts?: readonly Float32Array[];
  /** Final hidden state of the newest token, when `needs.hidden`. */
  readonly hidden?: Float32Array;
}

/** The one-call form of a report: the step and the layer's rows together. */
export interface LayerRows extends LayerStep, RoundRows {}

/**
 * The rows of each KV head to keep (indices into that head's live rows, increasing; the same set
 * for every head when the policy keeps per layer), or `undefined` when no round is due.
 */
export type RowsToKeep = readonly Int32Array[] | undefined;

/** A round that is due for one layer: what it reads, and the function that runs it. */
export interface RowRound {
  /** Layer index. */
  readonly layer: number;
  /** The step reported. */
  readonly step: number;
  /**
   * Recent queries whose attention the round reads (`rows.attention` is
   * `[window, queryHeads, maxLive]`): the policy's `needs.attentionWindow`, at most `step`, and
   * under `needs.attentionSinceLastRound` at most the tokens since the layer's previous round;
   * 0 for none.
   */
  readonly window: number;
  /** Whether the round reads `rows.gates`: the policy carries a `gate` (GSA). */
  readonly gates: boolean;
  /** The policy's needs: `keys`, `values`, `accumulatedAttention`, `hidden`. */
  readonly needs: ObservationNeeds;
  /**
   * Runs the round on the layer's rows (as they are at the step reported) and returns, per KV
   * head, the rows to keep (anchors included). A round runs once, and only while it is the
   * layer's latest report; refused rows leave it open.
   *
   * @throws LetheError `E_STATE` naming `round` when it ran or a later step of its layer was
   *   reported; `E_ARG` / `E_SHAPE` naming `rows.<field>` for a missing or malformed field, or
   *   `observation.<field>` (`checkObservation`).
   */
  keep(rows: RoundRows): readonly Int32Array[];
}

/**
 * The adapter {@link rowSelector} returns. Called with a {@link LayerRows}, it reports the step
 * and, when a round is due, runs it at once. {@link RowSelector.due} splits that in two.
 */
export interface RowSelector {
  /**
   * Reports a step with the layer's rows and, when a round is due, runs it: `due`, then `keep`
   * on the same rows.
   *
   * @throws LetheError as {@link RowSelector.due} (naming `rows.<field>`) and
   *   {@link RowRound.keep}.
   */
  (rows: LayerRows): RowsToKeep;
  /**
   * Reports a step (counting its `newTokens` toward the layer's trigger, once) and asks whether a
   * round is due, from the live counts alone: a {@link RowRound} saying which rows to build when
   * it is, `undefined` otherwise. Report each step of each layer once, by `due` or by the
   * one-call form.
   *
   * @throws LetheError `E_ARG` naming `query.<field>` for a bad layer, step or token count,
   *   `E_SHAPE` naming `query.liveCounts` for another length than `kvHeads`.
   */
  due(query: RoundQuery): RowRound | undefined;
}

/**
 * A one-function adapter for a runtime that keeps its own KV cache (node-llama-cpp style): after
 * each step the runtime hands a layer's live rows as plain arrays and gets back the rows to keep,
 * or `undefined` when the policy's trigger does not fire. The adapter keeps the per-layer trigger
 * counts and the policy's per-sequence state (one adapter per sequence), builds and checks the
 * observation ({@link checkObservation}), and adds the anchors — sinks (positions below
 * `anchors.sinks`) and the newest `anchors.window` rows — to every keep set, as a cache must.
 *
 * A runtime whose rows are costly to build (keys to copy, attention to compute) asks first:
 * `select.due({ layer, step, liveCounts })` counts the step and returns the due
 * {@link RowRound}, whose `keep(rows)` takes only what it asks for. Both forms count each
 * reported step once and keep the same rows.
 *
 * @example
 * ```ts
 * const select = rowSelector(policy, { layers: 24, kvHeads: 2, queryHeads: 14, headDim: 64 }, rng);
 * const keep = select({ layer, step, positions, keys }); // after the runtime appended the token
 * if (keep) for (let h = 0; h < keep.length; h++) myCache.gatherRows(layer, h, keep[h]);
 * // or: build the rows only when a round is due
 * const round = select.due({ layer, step, liveCounts });
 * if (round) apply(round.keep({ positions, attention: myAttention(layer, round.window) }));
 * ```
 * @throws LetheError `E_ARG` naming `shape.layers` unless a positive integer. The returned
 *   function throws as {@link RowSelector.due} (naming `rows.<field>`) and {@link RowRound.keep}.
 */
export function rowSelector(
  policy: EvictionPolicy,
  shape: RowSelectorShape,
  rng: RandomSource,
): RowSelector {
  const layers = assertInteger(shape.layers, 'shape.layers', 1);
  const since = new Int32Array(layers);
  /** Per layer, the round that may still run (its latest report's), if any. */
  const open: (RowRound | undefined)[] = new Array(layers);
  const state = policy.createState?.();
  const { needs } = policy;
  const gates = policy.gate !== undefined;

  /** Counts a step and, when a round is due, opens it; `counts` names the live counts' source. */
  const report = (query: RoundQuery, argument: string, counts: string): RowRound | undefined => {
    const layer = assertInteger(query.layer, `${argument}.layer`, 0);
    if (layer >= layers) {
      throw new LetheError('E_ARG', `no layer ${layer} of ${layers}`, `${argument}.layer`);
    }
    const liveCounts = checkLiveCounts(query.liveCounts, shape.kvHeads, counts);
    const most = Math.max(0, ...liveCounts);
    const { step } = query;
    if (!(Number.isInteger(step) && step >= most)) {
      throw new LetheError(
        'E_ARG',
        `must be the tokens the layer has processed, an integer ≥ the live rows (${most}), got ${String(step)}`,
        `${argument}.step`,
      );
    }
    since[layer]! += assertInteger(query.newTokens ?? 1, `${argument}.newTokens`, 0);
    open[layer] = undefined;
    const sinceLastRound = since[layer]!;
    if (!policy.shouldEvict({ layer, step, liveCounts, sinceLastRound }, state)) return undefined;
    const window = Math.min(
      needs.attentionWindow,
      step,
      needs.attentionSinceLastRound ? sinceLastRound : step,
    );
    const round: RowRound = {
      layer,
      step,
      window,
      gates,
      needs,
      keep(rows) {
        if (open[layer] !== round) {
          throw new LetheError(
            'E_STATE',
            `the round of layer ${layer} at step ${step} ran already, or a later step was reported`,
            'round',
          );
        }
        const observation = observe(rows, {
          ...shape,
          layer,
          step,
          liveCounts,
          window,
          gates,
          needs,
        });
        open[layer] = undefined;
        const decision = policy.select(observation, rng, state);
        since[layer] = 0;
        return keepSets(decision, rows.positions, policy.anchors);
      },
    };
    open[layer] = round;
    return round;
  };

  const select = (rows: LayerRows): RowsToKeep => {
    const { layer, step, newTokens, positions } = rows;
    if (!Array.isArray(positions)) {
      throw new LetheError('E_SHAPE', 'needs one array per KV head', 'rows.positions');
    }
    const liveCounts = positions.map((p) => p?.length);
    return report({ layer, step, newTokens, liveCounts }, 'rows', 'rows.positions')?.keep(rows);
  };
  const due = (query: RoundQuery) => report(query, 'query', 'query.liveCounts');
  return Object.assign(select, { due });
}

/** `counts` as an `Int32Array` of `kvHeads` non-negative integers. */
function checkLiveCounts(counts: ArrayLike<number>, kvHeads: number, argument: string) {
  if (typeof counts !== 'object' || counts === null || counts.length !== kvHeads) {
    throw new LetheError('E_SHAPE', `needs one entry per KV head (${kvHeads})`, argument);
  }
  return Int32Array.from({ length: kvHeads }, (_, h) =>
    assertInteger(counts[h], `${argument}[${h}]`, 0),
  );
}

/** What a round's observation is built for. */
interface RoundShape extends RowSelectorShape {
  readonly layer: number;
  readonly step: number;
  /** The live counts the round was found due for. */
  readonly liveCounts: Int32Array;
  readonly window: number;
  readonly gates: boolean;
  readonly needs: ObservationNeeds;
}

/**
 * The checked observation of `rows`: per-head fields packed `[kvHeads, maxLive, width]`, each
 * head exactly its live rows; those the round reads required.
 */
function observe(rows: RoundRows, round: RoundShape): LayerObservation {
  const { layer, kvHeads, queryHeads, headDim, step, window, needs } = round;
  const heads = rows.positions;
  if (!Array.isArray(heads) || heads.length !== kvHeads) {
    throw new LetheError('E_SHAPE', `needs one array per KV head (${kvHeads})`, 'rows.positions');
  }
  const { liveCounts } = round;
  heads.forEach((head, h) => {
    if (head?.length !== liveCounts[h]) {
      throw new LetheError(
        'E_SHAPE',
        `head ${h}: the round is due for ${liveCounts[h]} live rows, got ${head?.length}`,
        'rows.positions',
      );
    }
  });
  const maxLive = Math.max(0, ...liveCounts);
  const require = <T>(value: T | undefined, field: keyof RoundRows, why: string): T => {
    if (value === undefined) throw new LetheError('E_ARG', `missing: ${why}`, `rows.${field}`);
    return value;
  };
  const pack = <A extends Float32Array | Int32Array>(
    field: keyof RoundRows,
    width: number,
    out: A,
  ): A => {
    const perHead = rows[field] as readonly ArrayLike<number>[];
    if (!Array.isArray(perHead) || perHead.length !== kvHeads) {
      throw new LetheError('E_SHAPE', `needs one array per KV head (${kvHeads})`, `rows.${field}`);
    }
    perHead.forEach((values, h) => {
      const expected = liveCounts[h]! * width;
      if (values?.length !== expected) {
        throw new LetheError(
          'E_SHAPE',
          `head ${h}: expected ${expected} values (${liveCounts[h]} live rows × ${width}), got ${values?.length}`,
          `rows.${field}`,
        );
      }
      out.set(values, h * maxLive * width);
    });
    return out;
  };
  /** The last `window` queries' rows of `field` (`width` values each), of the `n ≥ window` given. */
  const recent = (field: 'queries' | 'attention', width: number): Float32Array | undefined => {
    const values = rows[field];
    if (values === undefined) return undefined;
    const given = width === 0 ? (values.length === 0 ? window : -1) : values.length / width;
    if (!(Number.isInteger(given) && given >= window)) {
      throw new LetheError(
        'E_SHAPE',
        `must hold the rows of n ≥ ${window} queries (${width} values each), got ${values.length} values`,
        `rows.${field}`,
      );
    }
    return given === window ? values : values.subarray(values.length - window * width);
  };
  const scalars = kvHeads * maxLive;
  const positions = pack('positions', 1, new Int32Array(scalars).fill(-1));
  const ages =
    rows.ages === undefined
      ? Int32Array.from(positions, (p) => (p < 0 ? 0 : step - 1 - p))
      : pack('ages', 1, new Int32Array(scalars));
  const why = (need: string) => `the policy needs ${need}`;
  if (round.gates) require(rows.gates, 'gates', 'the policy carries a gate and reads its values');
  if (needs.keys) require(rows.keys, 'keys', why('keys'));
  if (needs.values) require(rows.values, 'values', why('values'));
  if (window > 0) require(rows.attention, 'attention', why(`the attention of ${window} queries`));
  if (needs.accumulatedAttention) {
    require(rows.accumulatedAttention, 'accumulatedAttention', why('accumulated attention'));
    require(rows.attentionCounts, 'attentionCounts', why('accumulated attention'));
  }
  const queries = window > 0 ? recent('queries', queryHeads * headDim) : undefined;
  const vectors = scalars * headDim;
  return checkObservation({
    layer,
    kvHeads,
    queryHeads,
    headDim,
    step,
    liveCounts,
    maxLive,
    positions,
    ages,
    window,
    ...(rows.gates === undefined ? {} : { gates: pack('gates', 1, new Float32Array(scalars)) }),
    ...(needs.keys ? { keys: pack('keys', headDim, new Float32Array(vectors)) } : {}),
    ...(needs.values ? { values: pack('values', headDim, new Float32Array(vectors)) } : {}),
    ...(queries === undefined ? {} : { queries }),
    ...(window > 0 ? { attention: recent('attention', queryHeads * maxLive) } : {}),
    ...(needs.accumulatedAttention
      ? {
          accumulatedAttention: pack('accumulatedAttention', 1, new Float32Array(scalars)),
          attentionCounts: pack('attentionCounts', 1, new Float32Array(scalars)),
        }
      : {}),
    ...(needs.hidden ? { hidden: require(rows.hidden, 'hidden', why('the hidden state')) } : {}),
  });
}

/** The decision's keep set of each head, with the head's anchors ({@link withAnchors}). */
function keepSets(
  decision: KeepDecision,
  positions: readonly Int32Array[],
  anchors: Anchors,
): Int32Array[] {
  const sets =
    decision.granularity === 'layer' ? positions.map(() => decision.keep) : decision.keep;
  return sets.map((set, h) => withAnchors(set, positions[h]!, anchors));
}

/**
 * `set` (checked like a cache checks a decision) plus the head's anchored rows (`anchorMask`:
 * sinks by position, the newest `window` rows), increasing.
 */
function withAnchors(set: Int32Array, positions: Int32Array, anchors: Anchors): Int32Array {
  const chosen = indexKeepMask(set, positions.length, 'decision.keep');
  const anchored = anchorMask(positions, anchors);
  const rows: number[] = [];
  for (let i = 0; i < positions.length; i++) if (chosen[i] === 1 || anchored[i] === 1) rows.push(i);
  return Int32Array.from(rows);
}
