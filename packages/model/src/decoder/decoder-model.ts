import { LetheError } from '@lethe/core';
import { type KVCacheStore, resolveReadAnchors } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import { checkFiniteWeights } from '../io/finite-weights';
import { type Float32Tensor, type ModelConfig, parseModelConfig } from '../io/index';
import { withoutTiedHead } from '../io/tied-head';
import { collectCheckpointProblems, throwCheckpointProblems } from '../io/validate-checkpoint';
import { checkObject } from '../option-checks';
import {
  asynchronousBackend,
  type CachedStepRequest,
  cachedStep,
  cachedStepAsync,
  readsSynchronously,
} from './cached-step';
import { parallelForward } from './parallel-forward';
import { composeKeyBias } from './sequence-key-bias';
import { checkStepInputs, sequenceHooks, sequenceSelectors } from './step-checks';
import type {
  BatchControls,
  DecodeStepOptions,
  ForwardOptions,
  ForwardResult,
  PrefillOptions,
  StepResult,
} from './types';
import { type DecoderWeights, groupWeights, initialTensors } from './weights';

/**
 * A Llama / Qwen2 decoder-only transformer in tfjs with Hugging Face tensor names: RMSNorm,
 * RoPE (`rotate_half`), grouped-query attention, SwiGLU MLP, tied or untied LM head, q/k/v bias
 * for qwen2.
 *
 * Three ways to run it:
 * - {@link DecoderModel.forward}: parallel over whole sequences (training, scoring, replay with
 *   per-layer masks and key biases), differentiable with respect to {@link DecoderModel.parameters};
 * - {@link DecoderModel.prefill}: appends prompts (ragged batch) to one cache per sequence (a
 *   `KVCache`, or any other implementation of the `KVCacheStore` contract);
 * - {@link DecoderModel.decodeStep}: one token per sequence against its cache, with per-sequence,
 *   per-layer `LayerControls` (attention bias, page reads, MLP channel keep, activation bits)
 *   and an optional read-time page selector (Quest).
 *
 * @example
 * ```ts
 * const model = DecoderModel.random(defaultConfig({ vocab_size: 64, hidden_size: 32,
 *   intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2 }), 1);
 * const cache = new KVCache({ geometry: cacheGeometry({ layers: 2, kvHeads: 2, headDim: 8 }), queryHeads: 4 });
 * const first = model.prefill([cache], [Int32Array.of(1, 2, 3)]);
 * const next = model.decodeStep([cache], Int32Array.of(4));
 * ```
 */
export class DecoderModel {
  /** The validated, complete configuration. */
  readonly config: ModelConfig;
  /** Trainable parameters by HF tensor name (`lm_head.weight` absent when tied). */
  readonly parameters: Map<string, tf.Variable>;
  private readonly weights: DecoderWeights;
  private disposed = false;

  private constructor(config: ModelConfig, parameters: Map<string, tf.Variable>) {
    this.config = config;
    this.parameters = parameters;
    this.weights = groupWeights(config, parameters);
  }

  /** Width of one attention head (`config.head_dim`), e.g. for a cache geometry. */
  get headDim(): number {
    return this.config.head_dim;
  }

  /**
   * A randomly initialised model: matrices normal(0, 0.02), norms 1, biases 0; each tensor from
   * its own stream of `new Rng(seed)` (see `initialTensors`). Same seed, same weights.
   *
   * @throws LetheError `E_ARG` for an invalid config or seed.
   */
  static random(config: ModelConfig, seed: number): DecoderModel {
    const resolved = parseModelConfig(config);
    return DecoderModel.fromTensors(resolved, initialTensors(resolved, seed));
  }

  /**
   * A model from named float32 tensors in the HF layout (e.g. a decoded checkpoint). The data
   * is copied. With `tie_word_embeddings`, an `lm_head.weight` equal to the embedding bit for
   * bit is accepted and ignored (Hugging Face saves tied models that way too).
   *
   * @throws LetheError `E_CHECKPOINT` listing missing, extra or mis-shaped tensors, naming a
   *   tied `lm_head.weight` that differs from the embedding, or naming the tensors that hold a
   *   NaN or ±Infinity; `E_ARG` for an invalid config or `tensors` that is not an object.
   */
  static fromTensors(config: ModelConfig, given: Record<string, Float32Tensor>): DecoderModel {
    const resolved = parseModelConfig(config);
    checkObject(given, 'tensors', 'an object of named Float32 tensors');
    const tensors = withoutTiedHead(
      given,
      resolved,
      (tensor) => (tensor?.data instanceof Float32Array ? tensor.data : undefined),
      'config',
    );
    throwCheckpointProblems(
      collectCheckpointProblems(tensors, resolved, (tensor) => {
        if (!(tensor.data instanceof Float32Array)) return 'data must be a Float32Array';
        if (!Array.isArray(tensor.shape)) return undefined; // reported as a shape problem
        const count = tensor.shape.reduce((a, b) => a * b, 1);
        return tensor.data.length === count
          ? undefined
          : `data has ${tensor.data.length} elements, shape needs ${count}`;
      }),
    );
    checkFiniteWeights(tensors, 'tensors');
    const parameters = new Map<string, tf.Variable>();
    for (const [name, tensor] of Object.entries(tensors)) {
      parameters.set(
        name,
        tf.tidy(() => tf.variable(tf.tensor(tensor.data, [...tensor.shape], 'float32'), true)),
      );
    }
    return new DecoderModel(resolved, parameters);
  }

  /** Copies of every parameter as named float32 tensors (HF names), for checkpoints. */
  toTensors(): Record<string, Float32Tensor> {
    this.checkLive();
    const out: Record<string, Float32Tensor> = {};
    for (const [name, variable] of this.parameters) {
      out[name] = {
        shape: [...variable.shape],
        data: Float32Array.from(variable.dataSync() as Float32Array),
      };
    }
    return out;
  }

  /**
   * Parallel forward over whole sequences (prefill, training, replay). Differentiable with
   * respect to {@link DecoderModel.parameters} on every backend (`tf.gather`'s gradient needs the
   * `UnsortedSegmentSum` kernel that `@lethe/tensor` registers for wasm).
   *
   * @param inputIds int32 `[B, T]`.
   * @throws LetheError `E_ARG` naming `inputIds` or `options` when they are not a tensor and an
   *   object; `E_SHAPE` naming `inputIds` when its attention would not fit the backend's tensor
   *   memory (the wasm heap; see `checkAttentionMemory`), checked before anything is allocated;
   *   `E_SHAPE` / `E_DTYPE` / `E_ARG` for other bad inputs or options.
   */
  forward(inputIds: tf.Tensor2D, options: ForwardOptions = {}): ForwardResult {
    this.checkLive();
    return parallelForward(this.weights, this.config, inputIds, options);
  }

  /**
   * Runs a batch of prompts (ragged lengths, packed as rows; see `cachedStep`) and appends
   * their keys/values to each sequence's cache at positions `cache.length(0) + t` — so a
   * non-empty cache continues (chunked prefill). Queries are recorded where the cache keeps a
   * query window or tracks attention.
   *
   * @param caches one cache per prompt (any `KVCacheStore`), geometry matching the model.
   * @param prompts non-empty token ids per sequence.
   * @param options `controls[b][layer]` applied to every prompt token, and the gate hook (one for
   *   the batch or one per sequence, see {@link StepOptions.keyBias}). Each sequence's outputs and
   *   appended entries are those it gets in a batch of its own (bit for bit on wasm). Prefill reads
   *   densely: a `readSelector` (decode only) is rejected with `E_ARG`, and so is a
   *   `tokenKeep` below 1 in a chunk of more than one token. `everyPosition[b]` asks for
   *   sequence `b`'s logits at every position too (`positionLogits`, for scoring a prompt).
   * @returns logits `[B, V]` and final hidden `[B, D]` of each prompt's last token, the entries
   *   read (`reads`), and with `everyPosition` the flagged sequences' `positionLogits`.
   * @throws LetheError `E_ARG` / `E_SHAPE` / `E_STATE` naming the bad input (`E_SHAPE` naming
   *   `prompts` when the step would not fit the backend's tensor memory, see `checkStepMemory`;
   *   `E_ARG` naming `everyPosition` unless one boolean per prompt); `E_STATE` naming `model` when the step
   *   computes a non-finite key, value or query (NaN or infinite weights); `E_STATE` naming
   *   `backend` on a backend that reads only asynchronously (WebGPU in Node: use
   *   {@link DecoderModel.prefillAsync}). A prefill that throws modifies no cache and leaves no
   *   tensor behind.
   */
  prefill(
    caches: readonly KVCacheStore[],
    prompts: Int32Array[],
    options: PrefillOptions & { readonly controls?: BatchControls } = {},
  ): StepResult {
    return cachedStep(this.weights, this.config, this.prefillRequest(caches, prompts, options));
  }

  /**
   * {@link DecoderModel.prefill} reading the backend asynchronously: the same step, and the only
   * one on a backend that cannot read synchronously (WebGPU in Node). The caches must not be used
   * by anything else until it settles.
   */
  async prefillAsync(
    caches: readonly KVCacheStore[],
    prompts: Int32Array[],
    options: PrefillOptions & { readonly controls?: BatchControls } = {},
  ): Promise<StepResult> {
    return cachedStepAsync(
      this.weights,
      this.config,
      this.prefillRequest(caches, prompts, options),
    );
  }

  private prefillRequest(
    caches: readonly KVCacheStore[],
    prompts: Int32Array[],
    options: PrefillOptions & { readonly controls?: BatchControls },
  ): CachedStepRequest {
    checkObject(options, 'options');
    if ((options as DecodeStepOptions).readSelector !== undefined) {
      throw new LetheError(
        'E_ARG',
        'prefill reads densely; pass the read selector to decodeStep',
        'readSelector',
      );
    }
    const { everyPosition } = options;
    if (
      everyPosition !== undefined &&
      !(
        Array.isArray(everyPosition) &&
        everyPosition.length === (Array.isArray(prompts) ? prompts.length : -1) &&
        everyPosition.every((flag) => typeof flag === 'boolean')
      )
    ) {
      throw new LetheError('E_ARG', 'must be one boolean per prompt', 'everyPosition');
    }
    return this.stepRequest(caches, prompts, options.controls, options, 'prompts', everyPosition);
  }

  /**
   * One decode step: token `tokens[b]` at position `caches[b].length(0)` attends to the live
   * entries of its own cache (each layer) and to itself; its keys/values are then appended.
   *
   * @param controls `controls[b][layer]`: `attentionBias` `[Hkv, maxLive]` over the cache view
   *   before this step (the new token's own key gets no bias), `readPages` (pages of `pageSize`
   *   live entries per KV head; the new token always sees itself), `tokenKeep` κ (SOL's token
   *   sparsity: the read anchors plus the top pages by Quest's bound, see
   *   {@link DecodeStepOptions.readAnchors}), `mlpInputKeep`, `mlpKeep`, `activationBits`.
   *   Restricted reads are intersected and gathered: attention runs over the entries read only.
   * @param options the gate hook (one for the batch or one per sequence, see
   *   {@link StepOptions.keyBias}); `readSelector` (one for the batch or one per sequence): per
   *   sequence and layer, pages chosen from the cache and the new token's query, intersected
   *   with any `readPages` (see {@link DecodeStepOptions.readSelector}); `readAnchors` of
   *   `tokenKeep` reads. Each sequence's outputs are those it gets in a batch of its own (bit for
   *   bit on wasm), whatever the other sequences, their lengths, policies and controls.
   * @returns logits `[B, V]`, final hidden `[B, D]`, and the entries each token read (`reads`).
   * @throws LetheError `E_ARG` / `E_SHAPE` / `E_STATE` naming the bad input (a bad page list
   *   from the selector names `readSelector.selectPages[b][layer]`; a `tokenKeep` that is not a
   *   number `E_ARG`, one outside (0, 1] or NaN `E_BUDGET`, naming `controls[b][layer].tokenKeep`;
   *   bad `readAnchors` `E_ARG` naming `readAnchors.sinks` / `readAnchors.window`); `E_STATE`
   *   naming `model` when the step computes a non-finite key, value or query (NaN or infinite
   *   weights); `E_STATE` naming `backend` on a backend that reads only asynchronously (WebGPU in
   *   Node: use {@link DecoderModel.decodeStepAsync}). A step that throws modifies no cache and
   *   leaves no tensor behind.
   */
  decodeStep(
    caches: readonly KVCacheStore[],
    tokens: Int32Array,
    controls?: BatchControls,
    options: DecodeStepOptions = {},
  ): StepResult {
    return cachedStep(
      this.weights,
      this.config,
      this.decodeRequest(caches, tokens, controls, options),
    );
  }

  /**
   * {@link DecoderModel.decodeStep} reading the backend asynchronously: the same step, and the
   * only one on a backend that cannot read synchronously (WebGPU in Node). The caches must not be
   * used by anything else until it settles.
   */
  async decodeStepAsync(
    caches: readonly KVCacheStore[],
    tokens: Int32Array,
    controls?: BatchControls,
    options: DecodeStepOptions = {},
  ): Promise<StepResult> {
    return cachedStepAsync(
      this.weights,
      this.config,
      this.decodeRequest(caches, tokens, controls, options),
    );
  }

  private decodeRequest(
    caches: readonly KVCacheStore[],
    tokens: Int32Array,
    controls: BatchControls | undefined,
    options: DecodeStepOptions,
  ): CachedStepRequest {
    if (!(tokens instanceof Int32Array))
      throw new LetheError('E_ARG', 'must be an Int32Array', 'tokens');
    checkObject(options, 'options');
    const chunks = Array.from(tokens, (token) => Int32Array.of(token));
    return this.stepRequest(caches, chunks, controls, options, 'tokens');
  }

  /**
   * The input embeddings of `ids` on the host, `[ids.length, hidden_size]` row-major — what a
   * compute policy reading the token it steers (SOL) observes. One device read per call.
   *
   * @throws LetheError `E_ARG` naming `ids` unless an `Int32Array` of ids in `[0, vocab_size)`;
   *   `E_STATE` naming `model` after {@link dispose}, `backend` on a backend that reads only
   *   asynchronously (use {@link DecoderModel.embeddingRowsAsync}).
   */
  embeddingRows(ids: Int32Array): Float32Array {
    if (!readsSynchronously()) throw asynchronousBackend('embeddingRowsAsync');
    const rows = this.embeddingTensor(ids);
    try {
      return rows.dataSync() as Float32Array;
    } finally {
      rows.dispose();
    }
  }

  /** {@link DecoderModel.embeddingRows} reading the backend asynchronously (any backend). */
  async embeddingRowsAsync(ids: Int32Array): Promise<Float32Array> {
    const rows = this.embeddingTensor(ids);
    try {
      return (await rows.data()) as Float32Array;
    } finally {
      rows.dispose();
    }
  }

  /** Checks `ids`; the rows of the embedding they pick (the caller frees them). */
  private embeddingTensor(ids: Int32Array): tf.Tensor {
    this.checkLive();
    if (!(ids instanceof Int32Array)) throw new LetheError('E_ARG', 'must be an Int32Array', 'ids');
    for (const id of ids) {
      if (id < 0 || id >= this.config.vocab_size) {
        throw new LetheError('E_ARG', `id ${id} is outside [0, ${this.config.vocab_size})`, 'ids');
      }
    }
    return tf.tidy(() => tf.gather(this.weights.embedding, tf.tensor1d(ids, 'int32')));
  }

  /** Releases the parameters. The model cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return;
    for (const variable of this.parameters.values()) variable.dispose();
    this.disposed = true;
  }

  /** Validates a cached step's inputs and gathers them into its request. */
  private stepRequest(
    caches: readonly KVCacheStore[],
    chunks: Int32Array[],
    controls: BatchControls | undefined,
    options: DecodeStepOptions,
    chunkArgument: string,
    everyPosition?: readonly boolean[],
  ): CachedStepRequest {
    this.checkLive();
    const batch = Array.isArray(caches) ? caches.length : 0;
    const hooks = sequenceHooks(options.keyBias, batch);
    const selectors = sequenceSelectors(options.readSelector, batch);
    checkStepInputs(
      this.config,
      caches,
      chunks,
      controls,
      hooks,
      chunkArgument,
      selectors,
      everyPosition,
    );
    return {
      caches,
      chunks,
      ...(controls !== undefined ? { controls } : {}),
      ...(hooks !== undefined
        ? { keyBias: composeKeyBias(hooks, this.config.num_key_value_heads) }
        : {}),
      ...(selectors !== undefined ? { readSelectors: selectors } : {}),
      readAnchors: resolveReadAnchors(options.readAnchors),
      ...(everyPosition !== undefined ? { everyPosition } : {}),
    };
  }

  private checkLive(): void {
    if (this.disposed) throw new LetheError('E_STATE', 'the model was disposed', 'model');
  }
}
