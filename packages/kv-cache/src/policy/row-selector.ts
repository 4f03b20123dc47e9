import { assertInteger, LetheError } from '@lethe/core';
import { indexKeepMask } from '../cache/keep-mask';
import type { Anchors } from '../geometry';
import { anchorMask } from '../selection/anchors';
import { checkObservation } from './check-observation';
import type { EvictionPolicy } from './eviction-policy';
import type { LayerObservation } from './observation';
import type { RandomSource } from './random-source';

/** The shape of the model a {@link rowSelector} serves. */
export interface RowSelectorShape {
  readonly layers: number;
  readonly kvHeads: number;
  readonly queryHeads: number;
  readonly headDim: number;
}

/**
 * What a runtime hands a {@link rowSelector} for one layer after a step: its own live rows per KV
 * head, as plain arrays. Only what the policy's `needs` asks for is required.
 */
export interface LayerRows {
  /** Layer index. */
  readonly layer: number;
  /** Tokens this layer has processed so far (prompt and generated), e.g. the sequence length. */
  readonly step: number;
  /** Tokens processed since the previous call for this layer (default 1). */
  readonly newTokens?: number;
  /** Token position of each live row, per KV head, increasing. */
  readonly positions: readonly Int32Array[];
  /** Tokens processed since each row was written, per KV head (default `step − 1 − position`). */
  readonly ages?: readonly Int32Array[];
  /** Keys after RoPE, per KV head `[live, headDim]`, when `needs.keys`. */
  readonly keys?: readonly Float32Array[];
  /** Values, per KV head `[live, headDim]`, when `needs.values`. */
  readonly values?: readonly Float32Array[];
  /** Queries of the last `window` tokens `[window, queryHeads, headDim]`, when the policy observes a window. */
  readonly queries?: Float32Array;
  /** Their softmax attention over each head's live rows, `[window, queryHeads, maxLive]`. */
  readonly attention?: Float32Array;
  /** Attention received per row, per KV head, when `needs.accumulatedAttention`. */
  readonly accumulatedAttention?: readonly Float32Array[];
  /** Queries that saw each row, per KV head, with `accumulatedAttention`. */
  readonly attentionCounts?: readonly Float32Array[];
  /** Final hidden state of the newest token, when `needs.hidden`. */
  readonly hidden?: Float32Array;
}

/**
 * The rows of each KV head to keep (indices into that head's live rows, increasing; the same set
 * for every head when the policy keeps per layer), or `undefined` when no round is due.
 */
export type RowsToKeep = readonly Int32Array[] | undefined;

/** Packs per-head rows into the `[kvHeads, maxLive, width]` layout of an observation. */
function pack<A extends Float32Array | Int32Array>(
  rows: readonly (Float32Array | Int32Array)[],
  maxLive: number,
  width: number,
  out: A,
  argument: string,
): A {
  rows.forEach((row, h) => {
    if (row.length > maxLive * width) {
      throw new LetheError('E_SHAPE', `head ${h} holds more rows than positions`, argument);
    }
    out.set(row, h * maxLive * width);
  });
  return out;
}

/**
 * A one-function adapter for a runtime that keeps its own KV cache (node-llama-cpp style): after
 * each step the runtime hands a layer's live rows as plain arrays and gets back the rows to keep,
 * or `undefined` when the policy's trigger does not fire. The adapter keeps the per-layer trigger
 * counts and the policy's per-sequence state (one adapter per sequence), builds and checks the
 * observation ({@link checkObservation}: a wrong or missing `step` is refused), and adds the
 * anchors — sinks (positions below `anchors.sinks`) and the newest `anchors.window` rows — to
 * every keep set, as a cache must.
 *
 * @example
 * ```ts
 * const select = rowSelector(policy, { layers: 24, kvHeads: 2, queryHeads: 14, headDim: 64 }, rng);
 * const keep = select({ layer, step, positions, keys }); // after the runtime appended the token
 * if (keep) for (let h = 0; h < keep.length; h++) myCache.gatherRows(layer, h, keep[h]);
 * ```
 * @throws LetheError (from the returned function) `E_ARG` / `E_SHAPE` naming `rows.<field>` or
 *   `observation.<field>` for a malformed input, `E_ARG` naming `rows.<field>` when the policy
 *   needs a field that is missing.
 */
export function rowSelector(
  policy: EvictionPolicy,
  shape: RowSelectorShape,
  rng: RandomSource,
): (rows: LayerRows) => RowsToKeep {
  const layers = assertInteger(shape.layers, 'shape.layers', 1);
  const since = new Int32Array(layers);
  const state = policy.createState?.();
  const { needs } = policy;
  return (rows) => {
    const layer = assertInteger(rows.layer, 'rows.layer', 0);
    if (layer >= layers)
      throw new LetheError('E_ARG', `no layer ${layer} of ${layers}`, 'rows.layer');
    if (!Array.isArray(rows.positions) || rows.positions.length !== shape.kvHeads) {
      throw new LetheError(
        'E_SHAPE',
        `needs one array per KV head (${shape.kvHeads})`,
        'rows.positions',
      );
    }
    if (!Number.isInteger(rows.step)) {
      throw new LetheError('E_ARG', `must be an integer, got ${String(rows.step)}`, 'rows.step');
    }
    since[layer]! += assertInteger(rows.newTokens ?? 1, 'rows.newTokens', 0);
    const liveCounts = Int32Array.from(rows.positions, (p) => p.length);
    const context = { layer, step: rows.step, liveCounts, sinceLastRound: since[layer]! };
    if (!policy.shouldEvict(context, state)) return undefined;

    const maxLive = Math.max(0, ...liveCounts);
    const { kvHeads, queryHeads, headDim } = shape;
    const require = <T>(value: T | undefined, field: string): T => {
      if (value === undefined) {
        throw new LetheError('E_ARG', `the policy "${policy.name}" needs it`, `rows.${field}`);
      }
      return value;
    };
    const positions = pack(
      rows.positions,
      maxLive,
      1,
      new Int32Array(kvHeads * maxLive).fill(-1),
      'rows.positions',
    );
    const ages = rows.ages
      ? pack(rows.ages, maxLive, 1, new Int32Array(kvHeads * maxLive), 'rows.ages')
      : Int32Array.from(positions, (p) => (p < 0 ? 0 : rows.step - 1 - p));
    const window =
      needs.attentionWindow > 0
        ? require(rows.queries, 'queries').length / (queryHeads * headDim)
        : 0;
    type PerHead = 'keys' | 'values' | 'accumulatedAttention' | 'attentionCounts';
    const packed = (field: PerHead, width: number): Float32Array =>
      pack(
        require(rows[field], field),
        maxLive,
        width,
        new Float32Array(kvHeads * maxLive * width),
        `rows.${field}`,
      );
    const observation: LayerObservation = {
      layer,
      kvHeads,
      queryHeads,
      headDim,
      step: rows.step,
      liveCounts,
      maxLive,
      positions,
      ages,
      window,
      ...(needs.keys ? { keys: packed('keys', headDim) } : {}),
      ...(needs.values ? { values: packed('values', headDim) } : {}),
      ...(window > 0
        ? { queries: rows.queries!, attention: require(rows.attention, 'attention') }
        : {}),
      ...(needs.accumulatedAttention
        ? {
            accumulatedAttention: packed('accumulatedAttention', 1),
            attentionCounts: packed('attentionCounts', 1),
          }
        : {}),
      ...(needs.hidden ? { hidden: require(rows.hidden, 'hidden') } : {}),
    };
    const decision = policy.select(checkObservation(observation), rng, state);
    since[layer] = 0;
    const sets =
      decision.granularity === 'layer' ? rows.positions.map(() => decision.keep) : decision.keep;
    return sets.map((set, h) => withAnchors(set, rows.positions[h]!, policy.anchors));
  };
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
