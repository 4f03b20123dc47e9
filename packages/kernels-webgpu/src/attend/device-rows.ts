import { LetheError } from '@lethe/core';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { writeArray } from '../device/write-array';
import { gateRowsSource } from '../kernels/gate-rows-wgsl';
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
  /** Whether the rows hold a gate hook's gates too ({@link DeviceRows.writeGates}). */
  readonly gated?: boolean;
}

/**
 * A step's queries, keys and values on the device, every layer's in one buffer, in the layout
 * the paged attention reads (`DeviceKVCache.attendRows`): per layer, `[tokens, queryHeads,
 * headDim]` queries after RoPE, then `[tokens, kvHeads, headDim]` keys after RoPE, then values,
 * and, for `gated` rows, the `[tokens, kvHeads]` log-gates of a gate hook (padded to 4 floats),
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
  /**
   * Floats of one layer's block: `tokens·(queryHeads + 2·kvHeads)·headDim`, plus the log-gates'
   * `tokens·kvHeads` rounded up to a multiple of 4 for `gated` rows.
   */
  readonly floatsPerLayer: number;
  /**
   * What the step reports back, in uint32 words (storage, copy source and destination, so that
   * `tf.tensor({ buffer })` can copy it): `[layers, 3, tokens]` flags — per layer, section
   * (queries, keys, values) and row, the `NON_FINITE` bits of the values
   * {@link DeviceRows.rotate} read or wrote there, 0 for a row whose numbers are all finite —
   * then `[layers, tokens, kvHeads]` read counts: the entries a ranked read of a row's token
   * read of a KV head (`DeviceRowsRequest.ranking`; 0 where nothing was ranked); for `gated`
   * rows then the gates `[layers, tokens, kvHeads]` (float bits) and a `NON_FINITE` word per
   * layer and row for a gate that is not finite ({@link DeviceRows.writeGates}).
   */
  readonly flags: GPUBuffer;
  private readonly rotation: GPUBuffer;
  /** The layers whose gates were written. */
  private readonly gatedLayers = new Set<number>();
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
    const gateFloats = shape.gated === true ? 4 * Math.ceil((tokens * kvHeads) / 4) : 0;
    this.floatsPerLayer = tokens * (queryHeads + 2 * kvHeads) * headDim + gateFloats;
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
        4 * layers * tokens * (3 + kvHeads + (shape.gated === true ? kvHeads + 1 : 0)),
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
    const needed = 4 * this.tokens * (queryHeads + 2 * kvHeads) * headDim;
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

  /**
   * Writes `layer`'s gates from `source` (a tfjs tensor's buffer: the log-gates `[tokens,
   * kvHeads]`, then the gates `[tokens, kvHeads]`): the log-gates into the rows, where the
   * attention from them adds each to its token's own key (`DeviceKVCache.attendRows`), the gates
   * into {@link DeviceRows.flags} (read back with it, for the caches' appends), a gate that is
   * NaN or ±∞ flagged per row. One dispatch, submitted now.
   *
   * @throws `E_STATE` naming `shape.gated` for rows without gates; `E_ARG` naming `layer`;
   *   `E_SHAPE` naming `source` when it is smaller than `2·tokens·kvHeads` floats.
   */
  writeGates(layer: number, source: GPUBuffer): void {
    this.usable();
    this.checkLayer(layer);
    if (this.shape.gated !== true) {
      throw new LetheError('E_STATE', 'the rows were made without gates', 'shape.gated');
    }
    const { kvHeads } = this.shape;
    const count = this.tokens * kvHeads;
    if (source.size < 8 * count) {
      throw new LetheError(
        'E_SHAPE',
        `must hold the ${8 * count} bytes of 2·tokens·kvHeads floats, got ${source.size}`,
        'source',
      );
    }
    const params = Uint32Array.of(
      this.tokens,
      kvHeads,
      this.gateSectionOf(layer),
      this.gateSlot(layer, 0, 0),
      this.gateFlagSlot(layer, 0),
      0,
      0,
      0,
    );
    submitUploadedPass(
      this.device,
      'gate rows',
      gateRowsSource(),
      [{ data: params, label: 'gate parameters', uniform: true }],
      [source, this.buffer, this.flags],
      Math.ceil(count / 64),
    );
    this.gatedLayers.add(layer);
  }

  /** The float offset of `layer`'s log-gates in {@link DeviceRows.buffer}, once written; else undefined. */
  logGatesOf(layer: number): number | undefined {
    return this.gatedLayers.has(layer) ? this.gateSectionOf(layer) : undefined;
  }

  /** The word of {@link DeviceRows.flags} holding the gate of row `row` of `layer`'s head `h`. */
  gateSlot(layer: number, row: number, h: number): number {
    const { layers, kvHeads } = this.shape;
    return layers * this.tokens * (3 + kvHeads) + (layer * this.tokens + row) * kvHeads + h;
  }

  /** The word of {@link DeviceRows.flags} flagging a non-finite gate of row `row` of `layer`. */
  gateFlagSlot(layer: number, row: number): number {
    const { layers, kvHeads } = this.shape;
    return layers * this.tokens * (3 + 2 * kvHeads) + layer * this.tokens + row;
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

  /** The float offset of `layer`'s log-gate section. */
  private gateSectionOf(layer: number): number {
    const { queryHeads, kvHeads, headDim } = this.shape;
    return layer * this.floatsPerLayer + this.tokens * (queryHeads + 2 * kvHeads) * headDim;
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
