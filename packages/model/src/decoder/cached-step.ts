import {
  CacheAttention,
  DEFAULT_READ_ANCHORS,
  type KVCacheStore,
  type LayerControls,
  type ReadAnchors,
  type ReadSelector,
} from '@lethe/kv-cache';
import { LetheError, tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { checkAttentionBias } from './attention-bias';
import { type AppendRows, applyAppends, checkAppendsFinite, planAppends } from './cache-appends';
import { checkKeyBias } from './forward-checks';
import { ropeRowsInPlace } from './host-rope';
import { denseMlpRows, hasMlpKnobs, swiGluMlp } from './mlp';
import { type PackedRows, packRows } from './packed-rows';
import { planLayerReads, type SequenceRead } from './read-plan';
import { selectReadPages } from './read-selection';
import { rmsNorm } from './rms-norm';
import { ropeInverseFrequencies } from './rope';
import type { BatchControls, KeyBiasHook, StepReads, StepResult } from './types';
import type { DecoderWeights, LayerWeights } from './weights';

/** Inputs of {@link cachedStep}; validated by the caller (`checkStepInputs`). */
export interface CachedStepRequest {
  /** One cache per sequence. */
  readonly caches: readonly KVCacheStore[];
  /** New tokens per sequence (ragged), appended at positions `cache.length(0) + t`. */
  readonly chunks: readonly Int32Array[];
  /** `controls[b][layer]`. */
  readonly controls?: BatchControls;
  /**
   * Gate hook of the whole batch, `[B, Hkv, T]` (see `composeKeyBias`): the new keys' log-gates,
   * stored by the caches that store gates (the others get 0 from it).
   */
  readonly keyBias?: KeyBiasHook;
  /**
   * Read-time page selector of each sequence (undefined: dense), asked per layer; decode only
   * (chunks of one token).
   */
  readonly readSelectors?: readonly (ReadSelector | undefined)[];
  /** Entries a `tokenKeep` read never skips (default {@link DEFAULT_READ_ANCHORS}). */
  readonly readAnchors?: ReadAnchors;
  /** Sequences whose logits at every position of their chunk are returned (`positionLogits`). */
  readonly everyPosition?: readonly boolean[];
}

/** The realm's cache attention (the WebAssembly SIMD kernel where it loads). */
const attention = CacheAttention.create();

/**
 * Runs a chunk of new tokens per sequence against each sequence's cache, batched: the chunks'
 * tokens are packed as `[N, D]` rows (N = the tokens of all chunks, no padding), and in each layer
 * the q/k/v products are read back, RoPE is applied on the host ({@link ropeRowsInPlace}), and
 * each new token attends to the cached live entries its sequence reads (every live entry, or only
 * those the `readPages` / `tokenKeep` controls and the sequence's read selector leave: see
 * {@link planLayerReads}) and causally to its own chunk, straight from the cache
 * (`CacheAttention` of `@lethe/kv-cache`: the WebAssembly SIMD kernel, no packed view, no upload
 * of the cache), biased by the controls and gates. The rest of the layer stays on the tfjs
 * backend as `[N, D]` rows: the norms, one transpose of the attention input, the products and the
 * residual adds — no head splits, no RoPE tables. A token's result depends only on its own
 * sequence (its rows go through per-row products and its attention reads only its cache), so a
 * sequence gets bit for bit the same in any batch. Then the new keys, values (and gates) are
 * appended to every layer of every cache, and the queries are recorded where the cache keeps a
 * query window or tracks attention — only once every one of them is known to be finite, so a step
 * that fails changes no cache (a cache honouring the `KVCacheStore` contract refuses nothing else
 * the step can produce) and frees its tensors. Three read-backs per layer (q, k, v) and one of
 * the logits; the attention output goes up once per layer. Prefill is a chunk per prompt on
 * empty caches; decode is a chunk of one token.
 *
 * @returns logits and final hidden state of the last token of every chunk, and the entries read.
 * @throws LetheError `E_STATE` naming `model` when a new key, value, gate or recorded query is
 *   not finite; errors of the hooks, controls and read selector, each naming its argument.
 */
export function cachedStep(
  weights: DecoderWeights,
  config: ModelConfig,
  request: CachedStepRequest,
): StepResult {
  const { caches, chunks, controls, keyBias, readSelectors } = request;
  const anchors = request.readAnchors ?? DEFAULT_READ_ANCHORS;
  const rows = packRows(caches, chunks);
  if (readSelectors !== undefined && rows.width !== 1) {
    throw new LetheError(
      'E_ARG',
      'applies to decode steps (one token per sequence) only',
      'readSelector',
    );
  }
  const { num_key_value_heads: kvHeads, num_hidden_layers: layers, rms_norm_eps: eps } = config;
  const batch = caches.length;
  const recordQueries = caches.map((cache) => cache.queryWindow > 0 || cache.trackAttention);
  const inverseFrequencies = ropeInverseFrequencies(config.head_dim, config.rope_theta);
  const reads: StepReads = {
    entries: new Int32Array(batch * layers * kvHeads),
    live: new Int32Array(batch * layers * kvHeads),
  };
  const downloads: AppendRows[] = [];

  const { logits, hidden, positionLogits } = tf.tidy(() => {
    let x = tf.gather(weights.embedding, tf.tensor1d(rows.ids, 'int32'));
    const layerStep = (residual: tf.Tensor, layer: LayerWeights, l: number): tf.Tensor => {
      const layerControls = controls?.map((perLayer) => perLayer?.[l]);
      const normed = rmsNorm(residual, layer.inputNorm, eps);
      const columns = tf.transpose(normed);
      const queries = projectRows(layer.query, layer.queryBias, columns);
      const keys = projectRows(layer.key, layer.keyBias, columns);
      const values = projectRows(layer.value, layer.valueBias, columns);
      ropeRowsInPlace(queries, rows.positions, inverseFrequencies);
      ropeRowsInPlace(keys, rows.positions, inverseFrequencies);
      const logGates = newKeyLogGates(keyBias, l, normed, rows, kvHeads);
      downloads.push({ keys, values, queries, gates: logGates?.gates });

      // page selection and κ reads are decode-only: the queries are then one row per sequence
      const selected =
        readSelectors === undefined
          ? undefined
          : selectReadPages(caches, l, readSelectors, queries);
      const planned = planLayerReads(caches, l, {
        controls: layerControls,
        selected,
        queries: rows.width === 1 ? queries : undefined,
        anchors,
      });
      planned.forEach((read, b) => {
        reads.entries.set(read.counts, (b * layers + l) * kvHeads);
        reads.live.set(read.live, (b * layers + l) * kvHeads);
      });
      const output = attendLayer(config, l, {
        caches,
        rows,
        planned,
        controls: layerControls,
        queries,
        keys,
        values,
        logGates: logGates?.logGates,
      });
      const attended = tf.transpose(
        tf.matMul(
          layer.output,
          tf.tensor2d(transposeRows(output, rows.count), [output.length / rows.count, rows.count]),
        ),
      );
      const h = tf.add(residual, attended);
      return tf.add(h, mlpRows(rmsNorm(h, layer.postNorm, eps), layer, layerControls, rows));
    };
    weights.layers.forEach((layer, l) => {
      // each layer in its own scope: only the residual stream outlives it
      x = tf.tidy(() => layerStep(x, layer, l));
    });
    const final = rmsNorm(x, weights.finalNorm, eps);
    const hidden = (
      rows.count === batch ? final : tf.gather(final, tf.tensor1d(rows.lastRows, 'int32'))
    ) as tf.Tensor2D;
    const flagged = positionRows(request.everyPosition, rows);
    return {
      logits: lmHead(weights, hidden),
      hidden,
      positionLogits:
        flagged === undefined
          ? undefined
          : lmHead(weights, tf.gather(final, tf.tensor1d(flagged, 'int32'))),
    };
  });

  try {
    const appends = planAppends(config, caches, { rows, layers: downloads, recordQueries });
    checkAppendsFinite(appends);
    applyAppends(appends);
  } catch (error) {
    tf.dispose([logits, hidden, ...(positionLogits === undefined ? [] : [positionLogits])]);
    throw error;
  }
  return { logits, hidden, reads, ...(positionLogits === undefined ? {} : { positionLogits }) };
}

/** What one layer's attention reads, besides the model's geometry. */
interface LayerReads {
  readonly caches: readonly KVCacheStore[];
  readonly rows: PackedRows;
  readonly planned: readonly SequenceRead[];
  readonly controls: readonly (LayerControls | undefined)[] | undefined;
  /** `[N, Hq·hd]` after RoPE. */
  readonly queries: Float32Array;
  /** `[N, Hkv·hd]` after RoPE. */
  readonly keys: Float32Array;
  /** `[N, Hkv·hd]`. */
  readonly values: Float32Array;
  /** `[N, Hkv]` log-gates of the new keys, with a gate hook. */
  readonly logGates: Float32Array | undefined;
}

/**
 * The attention output of one layer, `[N, Hq·hd]` rows: for every sequence and KV head, its
 * chunk's queries over what it reads of its cache and, causally, its chunk
 * ({@link CacheAttention}).
 */
function attendLayer(config: ModelConfig, layer: number, reads: LayerReads): Float32Array {
  const { caches, rows, planned, controls, queries, keys, values, logGates } = reads;
  const {
    num_key_value_heads: kvHeads,
    num_attention_heads: queryHeads,
    head_dim: headDim,
  } = config;
  const groupSize = (queryHeads / kvHeads) * headDim;
  const querySize = queryHeads * headDim;
  const kvSize = kvHeads * headDim;
  const output = new Float32Array(rows.count * querySize);
  planned.forEach((read, b) => {
    const owner = `controls[${b}][${layer}]`;
    const bias = controls?.[b]?.attentionBias;
    const maxLive = Math.max(0, ...read.live);
    if (bias !== undefined) checkAttentionBias(bias, kvHeads, maxLive, owner);
    const first = rows.starts[b]!;
    const tokens = rows.lengths[b]!;
    // the group's queries and outputs `[tokens, group·hd]`, the chunk's keys and values `[tokens, hd]`
    const groupQueries = new Float32Array(tokens * groupSize);
    const groupOutput = new Float32Array(tokens * groupSize);
    const chunkKeys = new Float32Array(tokens * headDim);
    const chunkValues = new Float32Array(tokens * headDim);
    const chunkBias = logGates === undefined ? undefined : new Float32Array(tokens);
    for (let h = 0; h < kvHeads; h++) {
      for (let t = 0; t < tokens; t++) {
        const row = first + t;
        const q = row * querySize + h * groupSize;
        groupQueries.set(queries.subarray(q, q + groupSize), t * groupSize);
        const kv = row * kvSize + h * headDim;
        chunkKeys.set(keys.subarray(kv, kv + headDim), t * headDim);
        chunkValues.set(values.subarray(kv, kv + headDim), t * headDim);
        if (chunkBias !== undefined) chunkBias[t] = logGates![row * kvHeads + h]!;
      }
      const ranges = read.ranges[h];
      attention.attend(
        {
          cache: caches[b]!,
          layer,
          head: h,
          queries: groupQueries,
          ...(ranges === undefined ? {} : { ranges }),
          ...(bias === undefined
            ? {}
            : { liveBias: bias.subarray(h * maxLive, (h + 1) * maxLive) }),
          chunk: {
            keys: chunkKeys,
            values: chunkValues,
            ...(chunkBias === undefined ? {} : { bias: chunkBias }),
          },
        },
        groupOutput,
        0,
      );
      for (let t = 0; t < tokens; t++) {
        const at = (first + t) * querySize + h * groupSize;
        output.set(groupOutput.subarray(t * groupSize, (t + 1) * groupSize), at);
      }
    }
  });
  return output;
}

/**
 * `x·Wᵀ + b` of the rows, downloaded as `[N, out]` rows: `W·xᵀ` on the device (the product
 * `linear` runs) and the bias added on the host (the same float32 sum).
 */
function projectRows(weight: tf.Tensor, bias: tf.Tensor | undefined, columns: tf.Tensor) {
  const product = tf.matMul(weight, columns);
  const [out, count] = product.shape as [number, number];
  const data = product.dataSync() as Float32Array;
  const biasData = bias?.dataSync() as Float32Array | undefined;
  const rows = new Float32Array(out * count);
  for (let o = 0; o < out; o++) {
    const add = biasData?.[o];
    for (let n = 0; n < count; n++) {
      const value = data[o * count + n]!;
      rows[n * out + o] = add === undefined ? value : Math.fround(value + add);
    }
  }
  return rows;
}

/** `[N, n]` rows as `[n, N]` columns. */
function transposeRows(rows: Float32Array, count: number): Float32Array {
  const n = rows.length / count;
  const columns = new Float32Array(rows.length);
  for (let r = 0; r < count; r++) {
    for (let i = 0; i < n; i++) columns[i * count + r] = rows[r * n + i]!;
  }
  return columns;
}

/**
 * The new keys' log-gates `[N, Hkv]` from the gate hook (called on the attention input as the
 * right-padded `[B, T, D]` it takes), and their gates `exp(log g)` as the caches store them;
 * undefined without a hook.
 */
function newKeyLogGates(
  keyBias: KeyBiasHook | undefined,
  layer: number,
  normed: tf.Tensor,
  rows: PackedRows,
  kvHeads: number,
) {
  if (keyBias === undefined) return undefined;
  const { batch, width } = rows;
  const [, hiddenSize] = normed.shape as [number, number];
  const padded =
    rows.count === batch * width
      ? tf.reshape(normed, [batch, width, hiddenSize])
      : tf.reshape(tf.gather(normed, tf.tensor1d(rows.paddedRows, 'int32')), [
          batch,
          width,
          hiddenSize,
        ]);
  const bias = keyBias(layer, padded);
  if (bias === undefined) {
    throw new LetheError(
      'E_STATE',
      `returned nothing for layer ${layer}; gated caches need a gate for every key`,
      'keyBias',
    );
  }
  checkKeyBias(bias, batch, kvHeads, width, `keyBias(${layer})`);
  const full = tf.broadcastTo(bias, [batch, kvHeads, width]);
  const padLogGates = full.dataSync() as Float32Array;
  const padGates = tf.exp(full).dataSync() as Float32Array;
  const logGates = new Float32Array(rows.count * kvHeads);
  const gates = new Float32Array(rows.count * kvHeads);
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < rows.lengths[b]!; t++) {
      for (let h = 0; h < kvHeads; h++) {
        const from = (b * kvHeads + h) * width + t;
        const to = (rows.starts[b]! + t) * kvHeads + h;
        logGates[to] = padLogGates[from]!;
        gates[to] = padGates[from]!;
      }
    }
  }
  return { logGates, gates };
}

/** The layer's MLP of the `[N, D]` rows: dense, or with each sequence's SOL controls on its rows. */
function mlpRows(
  normed: tf.Tensor,
  layer: LayerWeights,
  controls: readonly (LayerControls | undefined)[] | undefined,
  rows: PackedRows,
): tf.Tensor {
  if (!hasMlpKnobs(controls)) return denseMlpRows(normed, layer.mlp);
  const [count, width] = normed.shape as [number, number];
  const rowControls = Array.from(rows.sequenceOfRow, (b) => controls[b]);
  return tf.reshape(swiGluMlp(tf.reshape(normed, [count, 1, width]), layer.mlp, rowControls), [
    count,
    width,
  ]);
}

/** Next-token logits of `[n, D]` rows: `linear(rows, lmHead)`'s product. */
function lmHead(weights: DecoderWeights, rows: tf.Tensor): tf.Tensor2D {
  return tf.transpose(tf.matMul(weights.lmHead, tf.transpose(rows))) as tf.Tensor2D;
}

/** The rows of the sequences `everyPosition` flags, in order; undefined when none is flagged. */
function positionRows(
  everyPosition: readonly boolean[] | undefined,
  rows: PackedRows,
): Int32Array | undefined {
  if (everyPosition === undefined || !everyPosition.includes(true)) return undefined;
  const flagged: number[] = [];
  rows.lengths.forEach((length, b) => {
    if (everyPosition[b] === true)
      for (let t = 0; t < length; t++) flagged.push(rows.starts[b]! + t);
  });
  return Int32Array.from(flagged);
}
