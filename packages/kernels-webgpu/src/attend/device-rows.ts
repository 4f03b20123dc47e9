import { LetheError } from '@lethe/core';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { writeArray } from '../device/write-array';
import { submitUploadedPass } from '../kernels/one-pass';
import { ROPE_PARAM_WORDS, ropeRowsSource } from '../kernels/rope-rows-wgsl';
import type { DeviceInputs } from './paged-attention';

/** The model shape of a step's {@link DeviceRows}. */
export interface DeviceRowsShape {
  readonly layers: number;
  readonly queryHeads: number;
  readonly kvHeads: number;
  /** A multiple of 4 (the attention reads `vec4`s). */
  readonly headDim: number;
}

/**
 * A step's queries, keys and values on the device, every layer's in one buffer, in the layout
 * the paged attention reads (`DeviceKVCache.attendRows`): per layer, `[tokens, queryHeads,
 * headDim]` queries after RoPE, then `[tokens, kvHeads, headDim]` keys after RoPE, then values,
 * row `n` being the step's token `n`. {@link DeviceRows.rotate} fills a layer from its fused q/k/v
 * projection (a tfjs tensor's buffer, `dataToGPU()`), so a step's attention inputs never leave
 * the device; `buffer` is readable (`COPY_SRC`) for the host copy a cache's bookkeeping needs,
 * once per step. Dispose it after the step.
 *
 * @example
 * ```ts
 * const rows = new DeviceRows(device, { layers, queryHeads, kvHeads, headDim }, rotation);
 * rows.rotate(0, projection); // [(queryHeads + 2·kvHeads)·headDim, tokens] columns
 * const output = DeviceKVCache.attendRows(0, parts, rows);
 * rows.dispose();
 * ```
 */
export class DeviceRows {
  /** Every layer's rows, `[layers, floatsPerLayer]`. */
  readonly buffer: GPUBuffer;
  /** Tokens (rows) of the step. */
  readonly tokens: number;
  /** Floats of one layer's block: `tokens·(queryHeads + 2·kvHeads)·headDim`. */
  readonly floatsPerLayer: number;
  /**
   * What the step reports back, in uint32 words (storage, copy source and destination, so that
   * `tf.tensor({ buffer })` can copy it): `[layers, 3, tokens]` flags — per layer, section
   * (queries, keys, values) and row, the `NON_FINITE` bits of the values
   * {@link DeviceRows.rotate} read or wrote there, 0 for a row whose numbers are all finite —
   * then `[layers, tokens, kvHeads]` read counts: the entries a ranked read of a row's token
   * read of a KV head (`DeviceRowsRequest.ranking`; 0 where nothing was ranked).
   */
  readonly flags: GPUBuffer;
  private readonly rotation: GPUBuffer;
  private disposed = false;

  /**
   * @param rotation `[2, tokens, headDim / 2]`: the rotary `cos`, then `sin`, of each token's
   *   angles (`position · inverseFrequency`), as the host rounds them.
   * @throws `E_SHAPE` naming `shape.headDim` (not a positive multiple of 4) or `rotation`
   *   (not `2·tokens·headDim/2` floats for some whole `tokens ≥ 1`); `E_DTYPE` naming `rotation`;
   *   `E_CAPACITY` when the rows pass the device's buffer limits.
   */
  constructor(
    readonly device: GPUDevice,
    readonly shape: DeviceRowsShape,
    rotation: Float32Array,
  ) {
    const { headDim, layers, queryHeads, kvHeads } = shape;
    if (!Number.isInteger(headDim) || headDim <= 0 || headDim % 4 !== 0) {
      throw new LetheError(
        'E_SHAPE',
        `must be a positive multiple of 4, got ${headDim}`,
        'shape.headDim',
      );
    }
    if (!(rotation instanceof Float32Array)) {
      throw new LetheError('E_DTYPE', 'must be a Float32Array', 'rotation');
    }
    const tokens = rotation.length / headDim;
    if (!Number.isInteger(tokens) || tokens < 1) {
      throw new LetheError(
        'E_SHAPE',
        `must hold 2·tokens·(headDim/2) floats (cos, then sin), got ${rotation.length}`,
        'rotation',
      );
    }
    this.tokens = tokens;
    this.floatsPerLayer = tokens * (queryHeads + 2 * kvHeads) * headDim;
    this.buffer = createGpuBuffer(
      device,
      4 * layers * this.floatsPerLayer,
      Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST,
      'step rows',
    );
    const made = [this.buffer];
    try {
      this.rotation = createGpuBuffer(
        device,
        rotation.byteLength,
        Usage.STORAGE | Usage.COPY_DST,
        'rotary angles',
      );
      made.push(this.rotation);
      // a new buffer holds zeros: no row flagged. Copy destination too: tfjs copies a buffer it
      // makes a tensor of into one of the same usage
      this.flags = createGpuBuffer(
        device,
        4 * layers * tokens * (3 + kvHeads),
        Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST,
        'non-finite flags and read counts',
      );
    } catch (error) {
      for (const buffer of made) destroyGpuBuffer(buffer);
      throw error;
    }
    writeArray(device, this.rotation, 0, rotation);
  }

  /**
   * Writes `layer`'s rows from its fused projection: `projection` holds `[(queryHeads +
   * 2·kvHeads)·headDim, tokens]` float32 columns (the query heads' channels, then the keys', then
   * the values'); queries and keys are rotated; non-finite numbers are flagged in `flags`. One
   * dispatch, submitted now (after everything submitted before, so a tfjs buffer may be released
   * afterwards).
   *
   * @throws `E_ARG` naming `layer`; `E_SHAPE` naming `projection` when it is smaller than that;
   *   `E_STATE` naming `dispose` after {@link DeviceRows.dispose}.
   */
  rotate(layer: number, projection: GPUBuffer): void {
    this.usable();
    this.checkLayer(layer);
    const { device } = this;
    const { queryHeads, kvHeads, headDim } = this.shape;
    const needed = 4 * this.floatsPerLayer;
    if (projection.size < needed) {
      throw new LetheError(
        'E_SHAPE',
        `must hold the ${needed} bytes of (queryHeads + 2·kvHeads)·headDim·tokens floats, got ${projection.size}`,
        'projection',
      );
    }
    const params = new Uint32Array(ROPE_PARAM_WORDS);
    params.set([this.tokens, queryHeads, kvHeads, headDim / 2, layer * this.floatsPerLayer, layer]);
    const pairs = this.tokens * (queryHeads + 2 * kvHeads) * (headDim / 2);
    submitUploadedPass(
      device,
      'rope rows',
      ropeRowsSource(),
      [{ data: params, label: 'rope parameters', uniform: true }],
      [projection, this.rotation, this.buffer, this.flags],
      Math.ceil(pairs / 64),
    );
  }

  /** Where `layer`'s block is, as the attention pass reads it. */
  inputsOf(layer: number): DeviceInputs {
    this.usable();
    this.checkLayer(layer);
    return { buffer: this.buffer, offset: layer * this.floatsPerLayer, rows: this.tokens };
  }

  /** The word of {@link DeviceRows.flags} holding the entries row `row` read of `layer`'s head `h`. */
  readCountSlot(layer: number, row: number, h: number): number {
    const { layers, kvHeads } = this.shape;
    return layers * 3 * this.tokens + (layer * this.tokens + row) * kvHeads + h;
  }

  /**
   * Throws `E_ARG` naming `rows` unless these rows are on `device` with the query heads, KV heads
   * and head dim of `cache` (what attends from them or appends them).
   */
  requireShapeOf(cache: {
    readonly device: GPUDevice;
    readonly queryHeads: number;
    readonly geometry: { readonly kvHeads: number; readonly headDim: number };
  }): void {
    const { shape } = this;
    if (
      this.device !== cache.device ||
      shape.kvHeads !== cache.geometry.kvHeads ||
      shape.headDim !== cache.geometry.headDim ||
      shape.queryHeads !== cache.queryHeads
    ) {
      throw new LetheError(
        'E_ARG',
        "must be on the cache's device with its query heads, KV heads and head dim",
        'rows',
      );
    }
  }

  /** Throws `E_ARG` naming `argument` unless rows `firstRow … firstRow + tokens − 1` exist. */
  requireSpan(firstRow: number, tokens: number, argument: string): void {
    if (!Number.isInteger(firstRow) || firstRow < 0 || firstRow + tokens > this.tokens) {
      throw new LetheError(
        'E_ARG',
        `must be an integer with firstRow + ${tokens} tokens ≤ the ${this.tokens} rows, got ${firstRow}`,
        argument,
      );
    }
  }

  /** Destroys the buffers (once). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    destroyGpuBuffer(this.buffer);
    destroyGpuBuffer(this.rotation);
    destroyGpuBuffer(this.flags);
  }

  private checkLayer(layer: number): void {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.shape.layers) {
      throw new LetheError(
        'E_ARG',
        `must be an integer in [0, ${this.shape.layers}), got ${layer}`,
        'layer',
      );
    }
  }

  private usable(): void {
    if (this.disposed) throw new LetheError('E_STATE', 'the rows were disposed', 'dispose');
  }
}
