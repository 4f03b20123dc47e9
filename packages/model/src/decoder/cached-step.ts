import {
  DEFAULT_READ_ANCHORS,
  type KVCacheStore,
  type LayerControls,
  type ReadAnchors,
  type ReadSelector,
} from '@lethe/kv-cache';
import { LetheError, tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { applyAppends, checkAppendsFinite, planAppends } from './cache-appends';
import { batchCachedLayer } from './cache-batch';
import { cachedAttention } from './cached-attention';
import { type AttendFunction, decoderLayer } from './decoder-layer';
import { checkKeyBias } from './forward-checks';
import { linear } from './linear';
import { paddedCausalVisibility, visibilityToLogitBias } from './masks';
import { planLayerReads } from './read-plan';
import { selectReadPages } from './read-selection';
import { rmsNorm } from './rms-norm';
import { ropeInverseFrequencies, ropeTables } from './rope';
import type { BatchControls, KeyBiasHook, StepReads, StepResult } from './types';
import type { DecoderWeights } from './weights';

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

/**
 * Runs a chunk of new tokens per sequence against each sequence's cache, batched: the chunks
 * are right-padded to the longest, and in each layer the new tokens attend to the cached live
 * entries they read (every live entry, or only those the `readPages` / `tokenKeep` controls and
 * the sequence's read selector leave, gathered from the cache: see {@link planLayerReads} and
 * {@link batchCachedLayer}), biased by the controls, and causally to the chunk itself — each
 * sequence's result independent of the others in the batch ({@link cachedAttention}). Then the
 * new keys, values (and gates) are appended to every layer of every cache, and the queries are
 * recorded where the cache keeps a query window or tracks attention — only once every one of
 * them is known to be finite, so a step that fails changes no cache (a cache honouring the
 * `KVCacheStore` contract refuses nothing else the step can produce) and frees its tensors.
 * One device read-back per call, plus, with a read selector or a `tokenKeep` κ < 1 in some
 * sequence's controls of a layer, one read-back of the new queries in that layer (page selection
 * needs them before the layer's attention). Prefill is a chunk per prompt on empty caches; decode
 * is a chunk of one token.
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
  const batch = caches.length;
  const lengths = Int32Array.from(chunks, (chunk) => chunk.length);
  const width = Math.max(...lengths);
  if (readSelectors !== undefined && width !== 1) {
    throw new LetheError(
      'E_ARG',
      'applies to decode steps (one token per sequence) only',
      'readSelector',
    );
  }
  const ids = new Int32Array(batch * width);
  const positions = new Int32Array(batch * width);
  caches.forEach((cache, b) => {
    ids.set(chunks[b]!, b * width);
    const start = cache.length(0);
    for (let t = 0; t < width; t++) positions[b * width + t] = start + t;
  });
  const recordQueries = caches.map((cache) => cache.queryWindow > 0 || cache.trackAttention);
  const anyRecord = recordQueries.includes(true);
  const { num_key_value_heads: kvHeads, rms_norm_eps: eps, num_hidden_layers: layers } = config;
  const reads: StepReads = {
    entries: new Int32Array(batch * layers * kvHeads),
    live: new Int32Array(batch * layers * kvHeads),
  };

  const positionRows = everyPositionRows(request.everyPosition, lengths, width);
  const { logits, hidden, positionLogits, outgoing } = tf.tidy(() => {
    const inverseFrequencies = tf.tensor1d(
      ropeInverseFrequencies(config.head_dim, config.rope_theta),
    );
    const rope = ropeTables(tf.tensor2d(positions, [batch, width], 'int32'), inverseFrequencies);
    const chunkVisibility = tf.tensor4d(paddedCausalVisibility(lengths, width), [
      batch,
      1,
      width,
      width,
    ]);
    const chunkBias = visibilityToLogitBias(chunkVisibility);
    const downloads: tf.Tensor[] = [];
    let x = tf.gather(weights.embedding, tf.tensor2d(ids, [batch, width], 'int32'));
    weights.layers.forEach((layer, l) => {
      const layerControls = controls?.map((perLayer) => perLayer?.[l]);
      const attend: AttendFunction = (heads, normed) => {
        const newKeyBias = keyBias?.(l, normed);
        if (keyBias !== undefined) {
          if (newKeyBias === undefined) throw missingGates(l);
          checkKeyBias(newKeyBias, batch, kvHeads, width, `keyBias(${l})`);
        }
        downloads.push(tokenMajor(heads.keys), tokenMajor(heads.values));
        if (anyRecord) downloads.push(tokenMajor(heads.queries));
        let ownBias = chunkBias;
        if (newKeyBias !== undefined) {
          ownBias = tf.add(chunkBias, tf.expandDims(newKeyBias, 2));
          const gates = tf.exp(tf.broadcastTo(newKeyBias, [batch, kvHeads, width]));
          downloads.push(tf.transpose(gates, [0, 2, 1]));
        }
        const queries =
          readSelectors !== undefined || sparseTokenKeep(layerControls)
            ? (heads.queries.dataSync() as Float32Array)
            : undefined;
        const selected =
          readSelectors === undefined
            ? undefined
            : selectReadPages(caches, l, readSelectors, queries!);
        const planned = planLayerReads(caches, l, {
          controls: layerControls,
          selected,
          queries,
          anchors,
        });
        planned.forEach((read, b) => {
          reads.entries.set(read.counts, (b * layers + l) * kvHeads);
          reads.live.set(read.live, (b * layers + l) * kvHeads);
        });
        const cached = batchCachedLayer(caches, l, planned, layerControls);
        const rows = planned.map((read, b) => ({
          tokens: lengths[b]!,
          reads: Math.max(0, ...read.counts),
        }));
        return cachedAttention(heads, ownBias, cached, rows);
      };
      x = decoderLayer(x, layer, config, rope, attend, layerControls);
    });
    const final = tf.reshape(rmsNorm(x, weights.finalNorm, eps), [
      batch * width,
      config.hidden_size,
    ]);
    const lastRows = Int32Array.from(lengths, (length, b) => b * width + length - 1);
    const hidden = tf.gather(final, tf.tensor1d(lastRows, 'int32'));
    const flat = downloads.map((t) => tf.reshape(t, [-1]));
    return {
      logits: linear(hidden, weights.lmHead) as tf.Tensor2D,
      hidden: hidden as tf.Tensor2D,
      positionLogits:
        positionRows === undefined
          ? undefined
          : (linear(
              tf.gather(final, tf.tensor1d(positionRows, 'int32')),
              weights.lmHead,
            ) as tf.Tensor2D),
      outgoing: tf.concat(flat).dataSync() as Float32Array,
    };
  });

  try {
    const appends = planAppends(config, caches, {
      lengths,
      width,
      positions,
      outgoing,
      recordQueries,
      gated: keyBias !== undefined,
    });
    checkAppendsFinite(appends);
    applyAppends(appends);
  } catch (error) {
    tf.dispose([logits, hidden, ...(positionLogits === undefined ? [] : [positionLogits])]);
    throw error;
  }
  return { logits, hidden, reads, ...(positionLogits === undefined ? {} : { positionLogits }) };
}

/**
 * Rows of the padded `[B · width]` outputs of the sequences `everyPosition` flags, each sequence's
 * `lengths[b]` rows in order; undefined when none is flagged.
 */
function everyPositionRows(
  everyPosition: readonly boolean[] | undefined,
  lengths: Int32Array,
  width: number,
): Int32Array | undefined {
  if (everyPosition === undefined || !everyPosition.includes(true)) return undefined;
  const rows: number[] = [];
  lengths.forEach((length, b) => {
    if (everyPosition[b] === true) for (let t = 0; t < length; t++) rows.push(b * width + t);
  });
  return Int32Array.from(rows);
}

/** Whether some sequence's controls ask this layer for a sparse `tokenKeep` read (κ < 1). */
function sparseTokenKeep(controls: readonly (LayerControls | undefined)[] | undefined): boolean {
  return controls?.some((c) => c?.tokenKeep !== undefined && c.tokenKeep < 1) ?? false;
}

/** `[B, H, T, hd]` → `[B, T, H, hd]`: the cache's `[T, heads, headDim]` layout per sequence. */
function tokenMajor(x: tf.Tensor): tf.Tensor {
  return tf.transpose(x, [0, 2, 1, 3]);
}

function missingGates(layer: number): LetheError {
  return new LetheError(
    'E_STATE',
    `returned nothing for layer ${layer}; gated caches need a gate for every key`,
    'keyBias',
  );
}
