import { tf } from '@lethe/tensor';
import { groupedQueryAttention } from './attention';
import { type MatMulPath, productSplits } from './batch-matmul';
import type { CachedLayerBatch } from './cache-batch';
import type { HeadProjections } from './decoder-layer';

/** The sizes of one sequence's part of a cached step's attention, before padding. */
export interface RowExtent {
  /** New tokens of the sequence (its chunk length). */
  readonly tokens: number;
  /** Cached entries it reads: the most over its KV heads. */
  readonly reads: number;
}

/**
 * Grouped-query attention of a cached step: each sequence's new tokens attend to its own chunk
 * (causally, `ownBias`) and to the cached entries it reads (`cached`), computed so that a
 * sequence's output does not depend on which other sequences share the batch — on wasm it is bit
 * for bit what the same sequence gets in a batch of its own. Three things make it so:
 *
 * - every row lays out its real entries first, in the same order as alone — its chunk's tokens,
 *   then its cached reads — and padding after them (a gather reorders the rows of a ragged chunk;
 *   decode steps need none), so sums over the entries see the same values in the same places,
 *   followed by zeros; a chunk whose scores would be large is attended sequence by sequence over
 *   exactly its real entries instead ({@link perSequence}), which keeps it within wasm's memory;
 * - the softmax is `exp(x − max) / Σ exp(x − max)` with tfjs's sequential sum (its fused softmax
 *   sums in SIMD lanes, whose grouping moves with the padded length);
 * - each sequence's products take the path its own sizes choose ({@link productSplits}), and a
 *   batch whose sequences choose differently is attended in two groups.
 *
 * Call it inside `tf.tidy`.
 *
 * @param heads the chunk's queries `[B, Hq, T, hd]` and keys, values `[B, Hkv, T, hd]` (after RoPE).
 * @param ownBias the chunk's logit bias `[B, Hkv|1, T, T]` (causal padding mask, new key biases).
 * @param cached the cached entries read, padded to the longest read (undefined: none read).
 * @param rows each sequence's chunk length and reads.
 * @returns the attention output `[B, Hq, T, hd]`.
 */
export function cachedAttention(
  heads: HeadProjections,
  ownBias: tf.Tensor,
  cached: CachedLayerBatch | undefined,
  rows: readonly RowExtent[],
): tf.Tensor {
  const [batch, queryHeads, width, headDim] = heads.queries.shape as [
    number,
    number,
    number,
    number,
  ];
  const kvHeads = heads.keys.shape[1]!;
  const group = queryHeads / kvHeads;
  const pathOf = ({ tokens, reads }: RowExtent): MatMulPath =>
    productSplits(group * tokens, headDim, tokens + reads) ? 'split' : 'batched';
  const slots = cached?.keys.shape[2] ?? 0;
  // Scores of the whole batch at once past this many floats go sequence by sequence instead.
  if (batch * queryHeads * width * (width + slots) > PER_SEQUENCE_SCORES) {
    return perSequence(heads, ownBias, cached, rows, pathOf);
  }
  let keys = heads.keys;
  let values = heads.values;
  let bias = tf.broadcastTo(ownBias, [batch, kvHeads, width, width]);
  if (cached !== undefined) {
    keys = tf.concat([keys, cached.keys], 2);
    values = tf.concat([values, cached.values], 2);
    const cachedBias = tf.expandDims(cached.logitBias, 2);
    bias = tf.concat([bias, tf.broadcastTo(cachedBias, [batch, kvHeads, width, slots])], 3);
    if (rows.some((row) => row.tokens < width)) {
      const order = realEntriesFirst(rows, width, slots);
      keys = gatherEntries(keys, order, 2);
      values = gatherEntries(values, order, 2);
      bias = gatherEntries(bias, order, 3);
    }
  }
  const paths = rows.map(pathOf);
  if (paths.every((path) => path === paths[0])) {
    return attend(heads.queries, keys, values, bias, paths[0]!);
  }
  const groups = (['batched', 'split'] as const).map((path) => ({
    path,
    members: paths.flatMap((p, b) => (p === path ? [b] : [])),
  }));
  const outputs = groups.map(({ path, members }) => {
    const index = tf.tensor1d(members, 'int32');
    const pick = (x: tf.Tensor) => tf.gather(x, index);
    return attend(pick(heads.queries), pick(keys), pick(values), pick(bias), path);
  });
  const inverse = new Int32Array(batch);
  groups
    .flatMap(({ members }) => members)
    .forEach((b, i) => {
      inverse[b] = i;
    });
  return tf.gather(tf.concat(outputs), tf.tensor1d(inverse, 'int32'));
}

/**
 * Floats of a batch's attention scores (`B·Hq·T·(T + S)`) above which a chunk is attended
 * sequence by sequence ({@link perSequence}): 4 Mi floats, 16 MB per score-sized tensor, of which
 * the softmax keeps a few alive at once — the batch's scores at once overflowed wasm's memory for
 * 16 prompts of 1,100 tokens, while attending sequence by sequence costs a dozen ops per sequence
 * and layer, which small chunks (4-token prefill chunks, decode steps) should not pay.
 */
const PER_SEQUENCE_SCORES = 4 * 2 ** 20;

/**
 * A large chunk (a long prefill, a KV refresh of a large batch): each sequence attends on its own, over
 * exactly its real entries — its chunk's `tokens` and the `reads` cached entries it reads — as
 * it would in a batch of one, each in its own `tf.tidy` so that the `[Hq, T, T + S]` scores of
 * one sequence are freed before the next (the batch's at once can outgrow wasm's memory for
 * long prompts); the outputs are padded back to the chunk's width.
 */
function perSequence(
  heads: HeadProjections,
  ownBias: tf.Tensor,
  cached: CachedLayerBatch | undefined,
  rows: readonly RowExtent[],
  pathOf: (row: RowExtent) => MatMulPath,
): tf.Tensor {
  const [, queryHeads, width, headDim] = heads.queries.shape as [number, number, number, number];
  const kvHeads = heads.keys.shape[1]!;
  const biasHeads = ownBias.shape[1]!;
  const outputs = rows.map((row, b) =>
    tf.tidy(() => {
      const { tokens, reads } = row;
      const own = (x: tf.Tensor, depth: number) =>
        tf.slice(x, [b, 0, 0, 0], [1, depth, tokens, -1]);
      let keys = own(heads.keys, kvHeads);
      let values = own(heads.values, kvHeads);
      let bias = tf.broadcastTo(tf.slice(ownBias, [b, 0, 0, 0], [1, biasHeads, tokens, tokens]), [
        1,
        kvHeads,
        tokens,
        tokens,
      ]);
      if (cached !== undefined && reads > 0) {
        const read = (x: tf.Tensor) => tf.slice(x, [b, 0, 0, 0], [1, kvHeads, reads, headDim]);
        keys = tf.concat([keys, read(cached.keys)], 2);
        values = tf.concat([values, read(cached.values)], 2);
        const readBias = tf.slice(cached.logitBias, [b, 0, 0], [1, kvHeads, reads]);
        bias = tf.concat(
          [bias, tf.broadcastTo(tf.expandDims(readBias, 2), [1, kvHeads, tokens, reads])],
          3,
        );
      }
      const queries = tf.slice(heads.queries, [b, 0, 0, 0], [1, queryHeads, tokens, headDim]);
      const output = attend(queries, keys, values, bias, pathOf(row));
      return tokens === width
        ? output
        : tf.pad(output, [
            [0, 0],
            [0, 0],
            [0, width - tokens],
            [0, 0],
          ]);
    }),
  );
  return outputs.length === 1 ? outputs[0]! : tf.concat(outputs);
}

/** Attention of a cached step: both products on `path`, the softmax summed sequentially. */
function attend(
  queries: tf.Tensor,
  keys: tf.Tensor,
  values: tf.Tensor,
  bias: tf.Tensor,
  path: MatMulPath,
): tf.Tensor {
  return groupedQueryAttention(queries, keys, values, bias, { path, sequentialSoftmax: true })
    .output;
}

/**
 * Per row, the order of the `width + slots` entries that puts its real ones first: its chunk's
 * tokens `[0, tokens)`, the cached slots `[width, width + slots)` (their padding hidden by the
 * bias), then the chunk's padding `[tokens, width)`. `[B, width + slots]`, row-major.
 */
function realEntriesFirst(rows: readonly RowExtent[], width: number, slots: number): Int32Array {
  const total = width + slots;
  const order = new Int32Array(rows.length * total);
  rows.forEach(({ tokens }, b) => {
    let at = b * total;
    for (let t = 0; t < tokens; t++) order[at++] = t;
    for (let s = 0; s < slots; s++) order[at++] = width + s;
    for (let t = tokens; t < width; t++) order[at++] = t;
  });
  return order;
}

/**
 * Reorders the entries of each batch row of `x` by `order` `[B, L]`: entries on axis 2 of keys or
 * values `[B, Hkv, L, hd]`, on axis 3 of a bias `[B, Hkv, T, L]`. One flat gather (tfjs's
 * `gather` with `batchDims` mixes rows up on wasm).
 */
function gatherEntries(x: tf.Tensor, order: Int32Array, axis: 2 | 3): tf.Tensor {
  const [batch, kvHeads, third, fourth] = x.shape as [number, number, number, number];
  const entries = order.length / batch;
  const outer = axis === 3 ? kvHeads * third : kvHeads;
  const inner = axis === 3 ? 1 : fourth;
  const index = new Int32Array(batch * outer * entries);
  let at = 0;
  for (let b = 0; b < batch; b++) {
    const row = order.subarray(b * entries, (b + 1) * entries);
    for (let block = b * outer; block < (b + 1) * outer; block++) {
      for (let j = 0; j < entries; j++) index[at++] = block * entries + row[j]!;
    }
  }
  const flat = tf.reshape(x, [batch * outer * entries, inner]);
  return tf.reshape(tf.gather(flat, tf.tensor1d(index, 'int32')), x.shape);
}
