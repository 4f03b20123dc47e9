import { LetheError } from '@lethe/core';
import type { KVCacheStore, ReadAnchors, ReadSelector } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { cachedStepProgram, type StepProgram } from './step-program';
import type { BatchControls, KeyBiasHook, StepResult } from './types';
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
  /** Entries a `tokenKeep` read never skips (default `DEFAULT_READ_ANCHORS`). */
  readonly readAnchors?: ReadAnchors;
  /** Sequences whose logits at every position of their chunk are returned (`positionLogits`). */
  readonly everyPosition?: readonly boolean[];
}

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
 * the logits; the attention output goes up once per layer. On device caches (`DeviceKVCache`s on
 * tfjs's WebGPU device) a step that needs no query on the host before attending (no page ranked
 * on the host: Quest and κ rank on caches that keep page bounds) reads nothing per layer: RoPE,
 * the gate hook's gates and the attention stay on the device, and the step reads back once, at
 * the end, the rows' flags (appending and recording queries from the rows there) or, where a
 * cache keeps host keys, every layer's rows. Prefill is a chunk per prompt on
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
  if (!readsSynchronously()) throw asynchronousBackend('prefillAsync / decodeStepAsync');
  const program = cachedStepProgram(weights, config, request);
  let step = program.next();
  while (!step.done) {
    let values: Float32Array[];
    try {
      values = step.value.map((tensor) => tensor.dataSync() as Float32Array);
    } catch (error) {
      program.return(undefined as never);
      throw error;
    }
    step = program.next(values);
  }
  return step.value;
}

/**
 * {@link cachedStep} reading the backend's tensors asynchronously (`data()`): the same step on
 * every backend, and the only one on WebGPU in Node, which cannot read synchronously. The caches
 * must not be used by anything else until it settles.
 */
export async function cachedStepAsync(
  weights: DecoderWeights,
  config: ModelConfig,
  request: CachedStepRequest,
): Promise<StepResult> {
  return drive(cachedStepProgram(weights, config, request));
}

async function drive(program: StepProgram): Promise<StepResult> {
  let step = program.next();
  while (!step.done) {
    let values: Float32Array[];
    try {
      values = (await Promise.all(step.value.map((tensor) => tensor.data()))) as Float32Array[];
    } catch (error) {
      program.return(undefined as never);
      throw error;
    }
    step = program.next(values);
  }
  return step.value;
}

/** The error of a synchronous read on a backend that reads asynchronously, naming the way out. */
export function asynchronousBackend(instead: string): LetheError {
  return new LetheError(
    'E_STATE',
    `the ${tf.getBackend()} backend reads its tensors asynchronously here: use ${instead}`,
    'backend',
  );
}

/**
 * Whether the backend reads tensors synchronously: all but WebGPU without `OffscreenCanvas`
 * (tfjs's WebGPU backend reads synchronously only through a canvas, which Node lacks).
 */
export function readsSynchronously(): boolean {
  return tf.getBackend() !== 'webgpu' || typeof OffscreenCanvas !== 'undefined';
}
