import { LetheError } from '@lethe/core';
import { DEFAULT_READ_ANCHORS, type LayerControls } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { type AppendRows, applyAppends, checkAppendsFinite, planAppends } from './cache-appends';
import type { CachedStepRequest } from './cached-step';
import { attendLayerOnDevice, deviceCaches } from './device-attention';
import { deviceRankedSequences, RankedReads } from './device-ranking';
import {
  appendRowsOnDevice,
  deviceStepRows,
  flagsTensor,
  keepsRowsOnDevice,
  keysStayOnDevice,
  packedGates,
  paddedSlots,
  reportedGates,
  rotateOnDevice,
  rowsTensor,
  rowsToAppends,
  writeGatesOnDevice,
} from './device-step-rows';
import { checkKeyBias } from './forward-checks';
import { ropeRotation, ropeRowsInPlace } from './host-rope';
import { attendLayer } from './layer-attention';
import { denseMlpRows, hasMlpKnobs, swiGluMlp } from './mlp';
import { type PackedRows, packRows } from './packed-rows';
import { planLayerReads } from './read-plan';
import { selectReadPages } from './read-selection';
import { rmsNorm } from './rms-norm';
import { ropeInverseFrequencies } from './rope';
import { checkRowFlags } from './row-flags';
import type { KeyBiasHook, StepReads, StepResult } from './types';
import type { DecoderWeights, LayerWeights } from './weights';

/**
 * A cached step as a program that stops wherever it needs values from the tensor backend: it
 * yields the tensors it needs and is resumed with their values, in order — synchronously on wasm
 * and the CPU (`dataSync`), asynchronously on WebGPU, whose reads are asynchronous (`data()`):
 * see `cachedStep` and `cachedStepAsync`, which drive it. Each stretch of tensor work between
 * two stops runs in its own `tf.tidy`; the program disposes the tensors it yielded once resumed,
 * and everything it holds when it is abandoned (`return()`, or an error thrown into it or out of
 * it), so a step that fails leaves no tensor behind.
 */
export type StepProgram = Generator<readonly tf.Tensor[], StepResult, readonly Float32Array[]>;

/**
 * The cached step (see `cachedStep` for what it computes) as a {@link StepProgram}: per layer one
 * stop for the q, k and v products (and the gate hook's log-gates and gates), then RoPE, the read
 * plan and the attention on the host, then the rest of the layer on the backend; the logits are
 * left on the backend for the caller to read. On device caches (`DeviceKVCache`s on tfjs's WebGPU
 * device) whose step needs no query on the host before attending ({@link keepsRowsOnDevice}),
 * there is no stop per layer: each layer's q/k/v projection is rotated into the step's device
 * rows (`DeviceRows`), a gate hook's log-gates and gates join them (`DeviceRows.writeGates`: the
 * chunk's bias, and the gates reported with the flags), the layer attends from them, and one
 * stop at the end reads every layer's
 * rows back for the caches' host copies — or, when no cache keeps host keys, only their flags,
 * the appends, query windows and H2O's accumulation running from the rows. Device caches
 * that keep page bounds and no host keys rank their read selector's pages and κ reads in the
 * attention launch ({@link RankedReads}): the counts come back with the flags (or, on the host
 * path — a sequence whose pages only the host ranks in the batch — in one more stop at the end).
 */
export function* cachedStepProgram(
  weights: DecoderWeights,
  config: ModelConfig,
  request: CachedStepRequest,
): StepProgram {
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
  // the step's rotary angles, once: the host RoPE of every layer and the device rows use them
  const rotation = ropeRotation(
    rows.positions,
    ropeInverseFrequencies(config.head_dim, config.rope_theta),
  );
  const reads: StepReads = {
    entries: new Int32Array(batch * layers * kvHeads),
    live: new Int32Array(batch * layers * kvHeads),
  };
  const downloads: AppendRows[] = [];
  // device caches on tfjs's device attend there (decided once per step), those with page bounds
  // and no host keys rank their pages there too ...
  const onDevice = deviceCaches(caches);
  const deviceRanks = onDevice === undefined ? undefined : deviceRankedSequences(onDevice);
  const ranked = new RankedReads(rows, layers, kvHeads);
  // ... and keep the step's queries, keys and values there when nothing needs them sooner
  const deviceRows =
    onDevice !== undefined && keepsRowsOnDevice(request, deviceRanks!)
      ? deviceStepRows(onDevice[0]!.device, config, rotation, keyBias !== undefined)
      : undefined;
  // where each packed row's gate sits in the gate hook's padded output (a gated device step)
  const gateSlots =
    deviceRows !== undefined && keyBias !== undefined ? paddedSlots(rows) : undefined;
  const hostSelectors = readSelectors?.map((selector, b) =>
    deviceRanks?.[b] === true ? undefined : selector,
  );

  let x: tf.Tensor | undefined;
  try {
    x = tf.tidy(() => tf.gather(weights.embedding, tf.tensor1d(rows.ids, 'int32')));
    for (const [l, layer] of weights.layers.entries()) {
      const layerControls = controls?.map((perLayer) => perLayer?.[l]);
      const residual: tf.Tensor = x;
      if (deviceRows !== undefined) {
        const [projection, gates] = tf.tidy(() => {
          const normed = rmsNorm(residual, layer.inputNorm, eps);
          const fused = tf.concat(qkvColumns(layer, tf.transpose(normed)), 0);
          if (keyBias === undefined) return [fused];
          return [fused, packedGates(gateTensors(keyBias, l, normed, rows, kvHeads), gateSlots!)];
        });
        try {
          rotateOnDevice(deviceRows, l, projection!);
          if (gates !== undefined) writeGatesOnDevice(deviceRows, l, gates);
        } finally {
          tf.dispose([projection!, ...(gates === undefined ? [] : [gates])]);
        }
        const planned = planLayerReads(caches, l, {
          controls: layerControls,
          selected: undefined,
          queries: undefined,
          anchors,
          deviceRanks,
          selectors: readSelectors,
        });
        recordReads(reads, planned, l, layers, kvHeads);
        ranked.record(l, planned);
        const output = attendLayerOnDevice(
          config,
          l,
          { caches, rows, planned, controls: layerControls, deviceRows },
          onDevice!,
        );
        try {
          x = tf.tidy(() => finishLayer(layer, residual, output, layerControls, rows, eps));
        } finally {
          output.dispose();
        }
        residual.dispose();
        continue;
      }
      const device = tf.tidy(() => {
        const normed = rmsNorm(residual, layer.inputNorm, eps);
        return [
          ...qkvColumns(layer, tf.transpose(normed)),
          ...gateTensors(keyBias, l, normed, rows, kvHeads),
        ];
      });
      let host: readonly Float32Array[];
      try {
        host = yield device;
      } finally {
        tf.dispose(device);
      }
      const queries = columnsToRows(host[0]!, rows.count);
      const keys = columnsToRows(host[1]!, rows.count);
      const values = columnsToRows(host[2]!, rows.count);
      ropeRowsInPlace(queries, rotation, config.head_dim);
      ropeRowsInPlace(keys, rotation, config.head_dim);
      const gates =
        keyBias === undefined ? undefined : unpadGates(host[3]!, host[4]!, rows, kvHeads);
      downloads.push({ keys, values, queries, gates: gates?.gates });

      // page selection and κ reads are decode-only: the queries are then one row per sequence
      const selected =
        hostSelectors === undefined
          ? undefined
          : selectReadPages(caches, l, hostSelectors, queries);
      const planned = planLayerReads(caches, l, {
        controls: layerControls,
        selected,
        queries: rows.width === 1 ? queries : undefined,
        anchors,
        ...(deviceRanks === undefined ? {} : { deviceRanks, selectors: readSelectors }),
      });
      recordReads(reads, planned, l, layers, kvHeads);
      ranked.record(l, planned);
      const layerReads = {
        caches,
        rows,
        planned,
        controls: layerControls,
        queries,
        keys,
        values,
        logGates: gates?.logGates,
      };
      const output =
        onDevice === undefined
          ? attendLayer(config, l, layerReads)
          : attendLayerOnDevice(config, l, layerReads, onDevice, (b) =>
              ranked.countsFor(onDevice[0]!.device, l, b),
            );
      try {
        x = tf.tidy(() => finishLayer(layer, residual, output, layerControls, rows, eps));
      } finally {
        if (!(output instanceof Float32Array)) output.dispose();
      }
      residual.dispose();
    }
    const final: tf.Tensor = x;
    const { logits, hidden, positionLogits } = tf.tidy(() => {
      const normed = rmsNorm(final, weights.finalNorm, eps);
      const lastRows =
        rows.count === batch ? normed : tf.gather(normed, tf.tensor1d(rows.lastRows, 'int32'));
      const flagged = positionRows(request.everyPosition, rows);
      return {
        logits: lmHead(weights, lastRows),
        hidden: lastRows as tf.Tensor2D,
        positionLogits:
          flagged === undefined
            ? undefined
            : lmHead(weights, tf.gather(normed, tf.tensor1d(flagged, 'int32'))),
      };
    });
    let appended = false;
    try {
      // on device rows, one read: their non-finite flags when the keys can stay there, else the
      // rows themselves (for the caches' host copies of keys, values and queries)
      // (and the ranked reads' counts with the flags; from host rows, their own buffer)
      const onlyFlags = deviceRows !== undefined && keysStayOnDevice(onDevice!);
      let gates: Float32Array[] | undefined;
      if (deviceRows !== undefined) {
        const withFlags = onlyFlags || ranked.any || keyBias !== undefined;
        const copies = onlyFlags
          ? [flagsTensor(deviceRows)]
          : [rowsTensor(deviceRows), ...(withFlags ? [flagsTensor(deviceRows)] : [])];
        let host: readonly Float32Array[];
        try {
          host = yield copies;
        } finally {
          tf.dispose(copies);
        }
        const flags = host[onlyFlags ? 0 : 1] as unknown as Int32Array | undefined;
        if (flags !== undefined) {
          ranked.checkQueries(flags, deviceRows.tokens);
          ranked.complete(reads, flags, deviceRows);
          if (keyBias !== undefined) gates = reportedGates(flags, deviceRows);
        }
        if (onlyFlags) {
          const gated = caches.map((cache) => keyBias !== undefined && cache.storeGates);
          checkRowFlags(flags!, deviceRows, rows, recordQueries, gated);
        } else {
          downloads.push(...rowsToAppends(host[0]!, config, deviceRows, gates));
        }
      } else {
        const counts = ranked.countsTensor();
        if (counts !== undefined) {
          let host: readonly Float32Array[];
          try {
            host = yield [counts];
          } finally {
            counts.dispose();
          }
          ranked.complete(reads, host[0] as unknown as Int32Array, undefined);
        }
      }
      if (onlyFlags) {
        appendRowsOnDevice(onDevice!, deviceRows!, rows, layers, recordQueries, gates);
      } else {
        const appends = planAppends(config, caches, { rows, layers: downloads, recordQueries });
        checkAppendsFinite(appends);
        applyAppends(appends);
      }
      appended = true;
    } finally {
      // an error, or the program abandoned at its last stop
      if (!appended) {
        tf.dispose([logits, hidden, ...(positionLogits === undefined ? [] : [positionLogits])]);
      }
    }
    return { logits, hidden, reads, ...(positionLogits === undefined ? {} : { positionLogits }) };
  } finally {
    x?.dispose();
    deviceRows?.dispose();
    gateSlots?.dispose();
    ranked.dispose();
  }
}

/** The layer's q, k and v products of `[D, N]` columns, `[out, N]` each. */
function qkvColumns(layer: LayerWeights, columns: tf.Tensor): tf.Tensor[] {
  return [
    projectColumns(layer.query, layer.queryBias, columns),
    projectColumns(layer.key, layer.keyBias, columns),
    projectColumns(layer.value, layer.valueBias, columns),
  ];
}

/** Records a layer's planned reads in the step's `reads` (`[B, layers, Hkv]`). */
function recordReads(
  reads: StepReads,
  planned: readonly { readonly counts: Int32Array; readonly live: Int32Array }[],
  layer: number,
  layers: number,
  kvHeads: number,
): void {
  planned.forEach((read, b) => {
    reads.entries.set(read.counts, (b * layers + layer) * kvHeads);
    reads.live.set(read.live, (b * layers + layer) * kvHeads);
  });
}

/**
 * The rest of a layer after attention: the output projection of the attention rows (on the host
 * or already a tensor), the residual, the MLP and its residual.
 */
function finishLayer(
  layer: LayerWeights,
  residual: tf.Tensor,
  output: Float32Array | tf.Tensor2D,
  controls: readonly (LayerControls | undefined)[] | undefined,
  rows: PackedRows,
  eps: number,
): tf.Tensor {
  const attended =
    output instanceof Float32Array
      ? tf.transpose(
          tf.matMul(
            layer.output,
            tf.tensor2d(rowsToColumns(output, rows.count), [
              output.length / rows.count,
              rows.count,
            ]),
          ),
        )
      : tf.transpose(tf.matMul(layer.output, output, false, true));
  const h = tf.add(residual, attended);
  return tf.add(h, mlpRows(rmsNorm(h, layer.postNorm, eps), layer, controls, rows));
}

/**
 * `W·xᵀ + b` of the rows as `[out, N]` columns (the product `linear` runs; the bias broadcast
 * over the columns, the same float32 sum).
 */
function projectColumns(weight: tf.Tensor, bias: tf.Tensor | undefined, columns: tf.Tensor) {
  const product = tf.matMul(weight, columns);
  return bias === undefined ? product : tf.add(product, tf.reshape(bias, [-1, 1]));
}

/** `[n, N]` columns as `[N, n]` rows. */
function columnsToRows(columns: Float32Array, count: number): Float32Array {
  const n = columns.length / count;
  const rows = new Float32Array(columns.length);
  for (let i = 0; i < n; i++) {
    for (let r = 0; r < count; r++) rows[r * n + i] = columns[i * count + r]!;
  }
  return rows;
}

/** `[N, n]` rows as `[n, N]` columns. */
function rowsToColumns(rows: Float32Array, count: number): Float32Array {
  const n = rows.length / count;
  const columns = new Float32Array(rows.length);
  for (let r = 0; r < count; r++) {
    for (let i = 0; i < n; i++) columns[i * count + r] = rows[r * n + i]!;
  }
  return columns;
}

/**
 * The gate hook's log-gates of the new keys and their gates `exp(log g)` as the caches store
 * them, `[B, Hkv, T]` each (the hook called on the attention input as the right-padded
 * `[B, T, D]` it takes); none without a hook.
 */
function gateTensors(
  keyBias: KeyBiasHook | undefined,
  layer: number,
  normed: tf.Tensor,
  rows: PackedRows,
  kvHeads: number,
): tf.Tensor[] {
  if (keyBias === undefined) return [];
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
  return [full, tf.exp(full)];
}

/** The padded `[B, Hkv, T]` log-gates and gates as `[N, Hkv]` rows. */
function unpadGates(
  padLogGates: Float32Array,
  padGates: Float32Array,
  rows: PackedRows,
  kvHeads: number,
) {
  const logGates = new Float32Array(rows.count * kvHeads);
  const gates = new Float32Array(rows.count * kvHeads);
  for (let b = 0; b < rows.batch; b++) {
    for (let t = 0; t < rows.lengths[b]!; t++) {
      for (let h = 0; h < kvHeads; h++) {
        const from = (b * kvHeads + h) * rows.width + t;
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
