import { LetheError } from '@lethe/core';
import { blockCount } from '@lethe/kv-cache';
import { evictedAtFromRounds, writeReplayMask } from './replay-visibility';
import { type EvictionRoundRecord, type NgcRollout, replayLength } from './rollout';

/** The rounds of one layer, laid out to gather their scores from the replay's attention. */
export interface LayerRounds {
  /** Number of rounds `R` of this layer over the batch. */
  readonly count: number;
  /** Query rows per round `W` (the largest window) and entries per round `E = N·b`. */
  readonly windowRows: number;
  readonly entries: number;
  /** Blocks per round `N` (the largest). */
  readonly blocks: number;
  /**
   * int32 `[R, W, E]` flat indices into the head-averaged attention `[B, T, T]`: round `r`'s
   * window query `q` over its `e`-th live entry (0 where padded; padding has weight 0).
   */
  readonly gather: Int32Array;
  /** `[R, W]`: `1 / window` for a round's window rows, 0 for padding rows. */
  readonly rowWeights: Float32Array;
  /** `[R, N·b]`: 1 for live entries, 0 for padding. */
  readonly entryMask: Float32Array;
  /** `[R, N]`: entries in each block (1 for padding blocks, which are never selected). */
  readonly blockSizes: Float32Array;
  /** Per round: its number of blocks and kept order, for eq. 2. */
  readonly rounds: readonly { readonly blocks: number; readonly order: Int32Array }[];
  /** Per round: the rollout it belongs to. */
  readonly rollout: Int32Array;
}

/** A batch of rollouts laid out for one parallel replay forward (host arrays). */
export interface ReplayBatch {
  /** Rollouts `B` and padded length `T`. */
  readonly size: number;
  readonly length: number;
  /** int32 `[B, T]` inputs: prompt and generated tokens but the last, right-padded with 0. */
  readonly inputIds: Int32Array;
  /** int32 `[B, T]`: the token position `t` predicts (0 where `tokenMask` is 0). */
  readonly targets: Int32Array;
  /** `[B, T]`: 1 where position `t` predicts a generated token. */
  readonly tokenMask: Float32Array;
  /** Per layer, `[B, 1, T, T]` replay visibility — or undefined to replay with the causal mask. */
  readonly masks: readonly (Float32Array | undefined)[];
  /** Per layer, the rounds to score (empty when the batch does not score rounds). */
  readonly layers: readonly LayerRounds[];
  /**
   * Rounds per rollout `M` (the most of any rollout) and, `[B, M]`, the index of each into the
   * concatenation of every layer's rounds (layer 0 first), or `-1` for padding.
   */
  readonly roundsPerRollout: number;
  readonly roundSlots: Int32Array;
  /** `[B, M]`: eq. 4's weight `1 / (L · |T_i^ℓ|)` of each round, 0 for padding. */
  readonly roundWeights: Float32Array;
}

/** What {@link replayBatch} builds. */
export interface ReplayBatchOptions {
  /** Number of layers `L` of the model. */
  readonly layers: number;
  /** Replay with each layer's eviction visibility (NGC, token-only) or the causal mask (dropout, no eviction). */
  readonly replayMasks: boolean;
  /** Lay out the rounds for L_mem (NGC only). */
  readonly scoreRounds: boolean;
}

/**
 * Lays out a batch of rollouts for one parallel forward (§4.5): inputs and next-token targets,
 * per-layer replay masks rebuilt from the recorded rounds (App. A.3), and the gather indices that
 * recompute each round's scores from the replay's own attention so eq. 2 is on the autograd graph.
 *
 * @throws LetheError `E_ARG` naming `rollouts` when empty or when rounds of one batch use
 *   different block sizes; `E_STATE` when a rollout's rounds are inconsistent.
 */
export function replayBatch(
  rollouts: readonly NgcRollout[],
  options: ReplayBatchOptions,
): ReplayBatch {
  if (rollouts.length === 0) throw new LetheError('E_ARG', 'must not be empty', 'rollouts');
  const size = rollouts.length;
  const length = Math.max(...rollouts.map(replayLength));
  const inputIds = new Int32Array(size * length);
  const targets = new Int32Array(size * length);
  const tokenMask = new Float32Array(size * length);
  rollouts.forEach((rollout, b) => {
    const row = b * length;
    inputIds.set(rollout.prompt, row);
    inputIds.set(
      rollout.tokens.subarray(0, rollout.tokens.length - 1),
      row + rollout.prompt.length,
    );
    const first = rollout.prompt.length - 1;
    rollout.tokens.forEach((token, k) => {
      targets[row + first + k] = token;
      tokenMask[row + first + k] = 1;
    });
  });
  const masks = Array.from({ length: options.layers }, (_, layer) => {
    if (!options.replayMasks) return undefined;
    const mask = new Float32Array(size * length * length);
    rollouts.forEach((rollout, b) => {
      const rounds = rollout.rounds.filter((r) => r.layer === layer);
      const evictedAt = evictedAtFromRounds(replayLength(rollout), rounds);
      writeReplayMask(evictedAt, length, mask, b * length * length);
    });
    return mask;
  });
  const layers = Array.from({ length: options.layers }, (_, layer) =>
    layerRounds(
      rollouts.map((r) => (options.scoreRounds ? r.rounds.filter((x) => x.layer === layer) : [])),
      length,
    ),
  );
  return {
    size,
    length,
    inputIds,
    targets,
    tokenMask,
    masks,
    layers,
    ...slots(layers, rollouts, options),
  };
}

function layerRounds(
  perRollout: readonly (readonly EvictionRoundRecord[])[],
  length: number,
): LayerRounds {
  const all = perRollout.flatMap((rounds, b) => rounds.map((round) => ({ round, b })));
  const blockSize = all[0]?.round.blockSize ?? 1;
  for (const { round } of all) {
    if (round.blockSize !== blockSize) {
      throw new LetheError(
        'E_ARG',
        `rounds use block sizes ${blockSize} and ${round.blockSize}; replay one block size per batch`,
        'rollouts',
      );
    }
  }
  const count = all.length;
  const windowRows = Math.max(0, ...all.map(({ round }) => round.window));
  const blocks = Math.max(
    0,
    ...all.map(({ round }) => blockCount(round.positions.length, blockSize)),
  );
  const entries = blocks * blockSize;
  const gather = new Int32Array(count * windowRows * entries);
  const rowWeights = new Float32Array(count * windowRows);
  const entryMask = new Float32Array(count * entries);
  const blockSizes = new Float32Array(count * blocks).fill(1);
  const rollout = new Int32Array(count);
  all.forEach(({ round, b }, r) => {
    rollout[r] = b;
    const live = round.positions.length;
    for (let q = 0; q < round.window; q++) {
      const query = round.step - round.window + q;
      rowWeights[r * windowRows + q] = 1 / round.window;
      const base = (b * length + query) * length;
      for (let e = 0; e < live; e++) {
        gather[(r * windowRows + q) * entries + e] = base + round.positions[e]!;
      }
    }
    entryMask.fill(1, r * entries, r * entries + live);
    for (let k = 0; k < blockCount(live, blockSize); k++) {
      blockSizes[r * blocks + k] = Math.min(blockSize, live - k * blockSize);
    }
  });
  return {
    count,
    windowRows,
    entries,
    blocks,
    gather,
    rowWeights,
    entryMask,
    blockSizes,
    rounds: all.map(({ round }) => ({
      blocks: blockCount(round.positions.length, blockSize),
      order: round.order,
    })),
    rollout,
  };
}

function slots(
  layers: readonly LayerRounds[],
  rollouts: readonly NgcRollout[],
  options: ReplayBatchOptions,
): Pick<ReplayBatch, 'roundsPerRollout' | 'roundSlots' | 'roundWeights'> {
  const size = rollouts.length;
  const perRollout = new Int32Array(size);
  for (const layer of layers) for (const b of layer.rollout) perRollout[b]! += 1;
  const roundsPerRollout = Math.max(0, ...perRollout);
  const roundSlots = new Int32Array(size * roundsPerRollout).fill(-1);
  const roundWeights = new Float32Array(size * roundsPerRollout);
  const filled = new Int32Array(size);
  let offset = 0;
  for (const layer of layers) {
    const perLayer = new Int32Array(size);
    for (const b of layer.rollout) perLayer[b]! += 1;
    layer.rollout.forEach((b, r) => {
      const slot = b * roundsPerRollout + filled[b]!;
      filled[b]! += 1;
      roundSlots[slot] = offset + r;
      roundWeights[slot] = 1 / (options.layers * perLayer[b]!);
    });
    offset += layer.count;
  }
  return { roundsPerRollout, roundSlots, roundWeights };
}
