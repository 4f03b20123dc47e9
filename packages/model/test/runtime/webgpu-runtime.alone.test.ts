import { DeviceKVCache, deviceCounters, liveGpuBuffers } from '@lethe/kernels-webgpu';
import { NO_NEEDS } from '@lethe/kv-cache';
import { H2OPolicy, QuestSelector, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { ensureWebGpu, initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ContinuousBatcher, DecoderModel, GenerationSession } from '../../src/index';
import { cacheFor, cacheOptionsFor, lively, tinyConfig } from '../decoder/helpers';
import { DrawnControls, LinearGate, POLICY_KINDS, policiesOf } from './batcher-fixtures';

// The runtime on tfjs's WebGPU backend (in Node: Dawn over SwiftShader, Debian's chromium), which
// reads tensors only asynchronously: the session steps through prefillAsync / decodeStepAsync and
// computes what it computes on wasm. In CI (CI=true) WebGPU must work, so the tests run and fail
// with the reason; elsewhere they are skipped, saying why.
const reason = await ensureWebGpu({ required: true }).then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
);
const skip = reason !== undefined && !process.env.CI;
if (skip) console.warn(`[@lethe/model] WebGPU runtime tests skipped: ${reason}`);

const config = tinyConfig({ max_position_embeddings: 640 });
const PROMPT = Int32Array.from({ length: 40 }, (_, i) => (7 * i + 3) % config.vocab_size);
/** Decode steps of the full cache's run (the 512: five splits of the attention pass by the end). */
const LONG_STEPS = 512;
/** Decode steps of the evicting runs. */
const STEPS = 96;
const fed = (steps: number) =>
  Int32Array.from({ length: steps }, (_, i) => (5 * i + 1) % config.vocab_size);

/**
 * The gate-evicting runs' model and tokens: every token once. The test gate of layer 0 reads a
 * token's embedding alone, so a repeated token repeats its gate exactly and the eviction breaks
 * the tie by age; tfjs's WebGPU products may round the same row differently by the product's
 * shape (a prefill's or a step's), and that ulp then decides the tie. Ties aside, as the device
 * cache's contract states, the live sets must be the same.
 */
const distinct = {
  config: tinyConfig({ max_position_embeddings: 640, vocab_size: PROMPT.length + STEPS }),
  prompt: Int32Array.from(PROMPT.keys()),
  fed: Int32Array.from({ length: STEPS }, (_, i) => PROMPT.length + i),
};

/** Teacher-forced logits of a session over the prompt and `fed`, and each layer's live positions. */
async function run(backend: 'wasm' | 'webgpu', eviction?: 'streaming-llm' | 'h2o' | 'gate') {
  const gated = eviction === 'gate';
  const FED = gated ? distinct.fed : fed(eviction === undefined ? LONG_STEPS : STEPS);
  const modelConfig = gated ? distinct.config : config;
  await initBackend(backend);
  const gpuBefore = gpuBytes();
  const buffersBefore = liveGpuBuffers().buffers;
  const model = DecoderModel.random(modelConfig, 11);
  const budget = { budget: { keepCount: 24 }, trigger: { whenLiveExceeds: 24, slack: 4 } };
  const gate = gated ? new LinearGate(modelConfig, 5) : undefined;
  const policy =
    eviction === 'streaming-llm'
      ? new StreamingLLMPolicy(budget)
      : eviction === 'h2o'
        ? new H2OPolicy(budget)
        : gate !== undefined
          ? policiesOf('gate', modelConfig, gate, 24).eviction
          : undefined;
  const session = new GenerationSession({
    model,
    prefillChunk: 16,
    ...(policy === undefined ? {} : { eviction: policy }),
  });
  const logits: Float32Array[] = [
    (await session.prefill([gated ? distinct.prompt : PROMPT])).logits[0]!,
  ];
  for (const token of FED) logits.push((await session.step([0], Int32Array.of(token))).logits[0]!);
  const cache = session.caches[0]!;
  const live = Array.from({ length: config.num_hidden_layers }, (_, l) =>
    Array.from(cache.observe(l, NO_NEEDS).positions),
  );
  const onDevice = cache instanceof DeviceKVCache;
  // nothing in these runs reads keys on the host: the session's caches keep them on the device
  const hostKeys = cache instanceof DeviceKVCache ? cache.hostKeys : undefined;
  const cacheBuffers = liveGpuBuffers().buffers;
  session.dispose();
  model.dispose();
  gate?.dispose();
  return {
    logits,
    live,
    onDevice,
    hostKeys,
    cacheBuffers,
    backend: tf.getBackend(),
    gpuLeft: gpuBytes() - gpuBefore,
    buffersLeft: liveGpuBuffers().buffers - buffersBefore,
  };
}

/**
 * Runs a step that must be refused: `E_STATE` naming `model` with `message`, and no tensor or
 * GPU buffer left behind.
 */
async function expectRefusedStep(step: () => Promise<unknown>, message: string): Promise<void> {
  const tensors = tf.memory().numTensors;
  const buffers = liveGpuBuffers().buffers;
  const error = await step().then(
    () => undefined,
    (thrown: unknown) => thrown as { code?: string; argument?: string; message: string },
  );
  expect(error?.code).toBe('E_STATE');
  expect(error?.argument).toBe('model');
  expect(error?.message).toContain(message);
  expect(tf.memory().numTensors).toBe(tensors);
  expect(liveGpuBuffers().buffers).toBe(buffers);
}

/** Fills `model`'s weight `name` with NaN; returns what puts it back. */
function poisonWeight(model: DecoderModel, name: string): () => void {
  const variable = model.parameters.get(name)!;
  const saved = variable.clone();
  const poison = tf.fill(variable.shape, Number.NaN);
  variable.assign(poison);
  poison.dispose();
  return () => {
    variable.assign(saved);
    saved.dispose();
  };
}

/** Bytes of the GPU buffers live tensors hold (the backend's pool of free ones aside; 0 on wasm). */
function gpuBytes(): number {
  return (tf.memory() as tf.MemoryInfo & { numBytesInGPU?: number }).numBytesInGPU ?? 0;
}

describe.skipIf(skip)('the runtime on WebGPU (SwiftShader in Node)', () => {
  let previous: string;
  beforeAll(() => {
    previous = tf.getBackend();
  });
  afterAll(async () => {
    await initBackend(previous as 'wasm');
  });

  for (const eviction of [undefined, 'streaming-llm', 'h2o', 'gate'] as const) {
    const steps = eviction === undefined ? LONG_STEPS : STEPS;
    it(`equals wasm over a prefill and ${steps} decode steps (${eviction ?? 'full cache'}): logits within 1e-5 relative, the same live entries`, async () => {
      const wasm = await run('wasm', eviction);
      const before = tf.memory().numTensors;
      const webgpu = await run('webgpu', eviction);
      expect(webgpu.backend).toBe('webgpu');
      // the default cache there is the device cache, whose buffers the session frees
      expect(webgpu.onDevice).toBe(true);
      expect(webgpu.hostKeys).toBe(false);
      expect(wasm.onDevice).toBe(false);
      expect(webgpu.cacheBuffers).toBeGreaterThan(0);
      expect(webgpu.buffersLeft).toBe(0);
      expect(tf.memory().numTensors).toBe(before);
      expect(webgpu.gpuLeft).toBe(0);
      let worst = 0;
      wasm.logits.forEach((row, t) => {
        row.forEach((x, v) => {
          worst = Math.max(worst, Math.abs(x - webgpu.logits[t]![v]!) / (1 + Math.abs(x)));
        });
      });
      // attention: the paged WGSL kernel over the device cache vs the WebAssembly kernel over
      // the host cache; products, norms and MLP on the GPU vs wasm (SwiftShader: a few float32
      // ulps here)
      expect(worst).toBeLessThan(1e-5);
      expect(webgpu.live).toEqual(wasm.live);
    }, 600_000); // SwiftShader, idle 2 cores: 50 s for the 512 steps, 7–10 s for 96 (with
    // tfjs's tiled matmul, which initBackend asks for on a software adapter; its reduce program
    // took the 512 steps past 1,200 s beside CI's other tests)
  }

  it('ranks Quest’s pages (beside a GSA gate too) and SOL’s κ reads on the device as wasm ranks them on the host: same logits, same entries read, no key on the host', async () => {
    const ranked = async (
      backend: 'wasm' | 'webgpu',
      kind: 'quest' | 'compute' | 'gated quest',
    ) => {
      await initBackend(backend);
      const buffers = liveGpuBuffers().buffers;
      const gated = kind === 'gated quest';
      const modelConfig = gated ? distinct.config : config;
      const model = DecoderModel.random(modelConfig, 12);
      const gate = gated ? new LinearGate(modelConfig, 6) : undefined;
      const quest = new QuestSelector({ tokenBudget: 12, pageSize: 4, denseLayers: 0 });
      const session = new GenerationSession({
        model,
        prefillChunk: 16,
        pageSize: 4,
        ...(kind === 'compute'
          ? { compute: new DrawnControls(config.num_hidden_layers) }
          : { readSelector: quest }),
        ...(gate === undefined
          ? {}
          : { eviction: policiesOf('gate', modelConfig, gate, 48).eviction }),
      });
      const logits: Float32Array[] = [
        (await session.prefill([gated ? distinct.prompt : PROMPT])).logits[0]!,
      ];
      // every tensor read is a wait for the device: count them over the decode steps
      const spy = vi.spyOn(tf.Tensor.prototype, 'data');
      for (const token of gated ? distinct.fed : fed(STEPS)) {
        logits.push((await session.step([0], Int32Array.of(token))).logits[0]!);
      }
      const perStep = spy.mock.calls.length / STEPS;
      spy.mockRestore();
      const cache = session.caches[0]!;
      const device = cache instanceof DeviceKVCache ? cache : undefined;
      const shape = { pageBounds: device?.pageBounds, hostKeys: device?.hostKeys };
      const reads = session.decodeReads[0]!;
      session.dispose();
      model.dispose();
      gate?.dispose();
      return { logits, reads, shape, perStep, buffersLeft: liveGpuBuffers().buffers - buffers };
    };
    for (const kind of ['quest', 'compute', 'gated quest'] as const) {
      const wasm = await ranked('wasm', kind);
      const webgpu = await ranked('webgpu', kind);
      expect(webgpu.shape, kind).toEqual({ pageBounds: true, hostKeys: false });
      expect(webgpu.buffersLeft, kind).toBe(0);
      // the pages chosen are the host's: the same entries read (and fewer than the live ones)
      expect(webgpu.reads, kind).toEqual(wasm.reads);
      expect(wasm.reads.entries, kind).toBeLessThan(wasm.reads.live);
      let worst = 0;
      wasm.logits.forEach((row, t) => {
        row.forEach((x, v) => {
          worst = Math.max(worst, Math.abs(x - webgpu.logits[t]![v]!) / (1 + Math.abs(x)));
        });
      });
      expect(worst, kind).toBeLessThan(1e-5);
      // no read per layer (q, k and v of each, on the host path): the step's flags (with the
      // ranked reads' counts and the gates), the logits and hidden state the session reads, and
      // for a compute policy the input embedding it observes
      expect(webgpu.perStep, kind).toBe(kind === 'compute' ? 4 : 3);
    }
  }, 300_000);

  it('a device step whose ranked read’s query is not finite changes no cache and leaks nothing (κ ranked on the device)', async () => {
    await initBackend('webgpu');
    const model = lively(config, 22);
    const device = (tf.backend() as unknown as { device: GPUDevice }).device;
    const caches = [0, 1].map(
      () => new DeviceKVCache({ ...cacheOptionsFor(config), pageBounds: true }, device),
    );
    const prefill = await model.prefillAsync(caches, [
      Int32Array.from({ length: 30 }, (_, i) => i % 7),
      Int32Array.from({ length: 26 }, (_, i) => (3 * i) % 5),
    ]);
    tf.dispose([prefill.logits, prefill.hidden]);
    const lengths = caches.map((cache) => cache.length(0));
    const restore = poisonWeight(model, 'model.layers.1.self_attn.q_proj.weight');
    const kappa = Array.from({ length: config.num_hidden_layers }, () => ({ tokenKeep: 0.5 }));
    await expectRefusedStep(
      () => model.decodeStepAsync(caches, Int32Array.of(6, 7), [kappa, kappa]),
      'layer 1 produced a non-finite query (NaN) for sequence 0',
    );
    expect(caches.map((cache) => cache.length(0))).toEqual(lengths);
    restore();
    for (const cache of caches) cache.dispose();
    model.dispose();
  }, 60_000);

  it('a device step whose gate hook gives a non-finite gate changes no cache and leaks nothing (the gates in the rows)', async () => {
    await initBackend('webgpu');
    const model = lively(config, 23);
    const device = (tf.backend() as unknown as { device: GPUDevice }).device;
    const caches = [0, 1].map(
      () => new DeviceKVCache({ ...cacheOptionsFor(config), storeGates: true }, device),
    );
    const { num_key_value_heads: kvHeads } = config;
    const hook =
      (bad: boolean) =>
      (layer: number, x: tf.Tensor): tf.Tensor => {
        const [batch, width] = x.shape as [number, number, number];
        // +∞ (WGSL leaves exp(NaN) unspecified: SwiftShader gives +∞)
        const value = bad && layer === 1 ? Number.POSITIVE_INFINITY : -0.25;
        return tf.fill([batch, kvHeads, width], value);
      };
    const prefill = await model.prefillAsync(
      caches,
      [Int32Array.of(1, 2, 3), Int32Array.of(4, 5)],
      { keyBias: hook(false) },
    );
    tf.dispose([prefill.logits, prefill.hidden]);
    const gatesBefore = await Promise.all(
      caches.map(async (cache) => Array.from((await cache.observeAsync(1, NO_NEEDS)).gates!)),
    );
    await expectRefusedStep(
      () => model.decodeStepAsync(caches, Int32Array.of(6, 7), undefined, { keyBias: hook(true) }),
      'layer 1 produced gates with a non-finite value (Infinity)',
    );
    expect(caches.map((cache) => cache.length(1))).toEqual([3, 2]);
    const gatesAfter = await Promise.all(
      caches.map(async (cache) => Array.from((await cache.observeAsync(1, NO_NEEDS)).gates!)),
    );
    expect(gatesAfter).toEqual(gatesBefore);
    // a good step appends the gates the hook gave (exp(−0.25)), from the rows' report
    const out = await model.decodeStepAsync(caches, Int32Array.of(6, 7), undefined, {
      keyBias: hook(false),
    });
    tf.dispose([out.logits, out.hidden]);
    const last = (await caches[0]!.observeAsync(1, NO_NEEDS)).gates!;
    expect(last[3]).toBe(Math.fround(Math.exp(-0.25)));
    for (const cache of caches) cache.dispose();
    model.dispose();
  }, 60_000);

  it('serves a ContinuousBatcher on device caches as on wasm (every policy kind, greedy) and frees each cache', async () => {
    const served = async (backend: 'wasm' | 'webgpu') => {
      await initBackend(backend);
      const buffers = liveGpuBuffers().buffers;
      const model = DecoderModel.random(config, 13);
      const gate = new LinearGate(config, 5);
      const batcher = new ContinuousBatcher({ model, prefillChunk: 8, maxSequences: 4 });
      const results = await Promise.all(
        POLICY_KINDS.map((kind, i) =>
          batcher.submit({
            prompt: Int32Array.from(
              { length: 9 + 3 * i },
              (_, t) => (5 * t + i) % config.vocab_size,
            ),
            maxNewTokens: 10,
            sampling: { temperature: 0 },
            seed: i,
            policies: policiesOf(kind, config, gate),
          }),
        ),
      );
      await batcher.close();
      gate.dispose();
      model.dispose();
      return { results, buffersLeft: liveGpuBuffers().buffers - buffers };
    };
    const wasm = await served('wasm');
    const webgpu = await served('webgpu');
    expect(webgpu.buffersLeft).toBe(0);
    POLICY_KINDS.forEach((kind, i) => {
      expect(Array.from(webgpu.results[i]!.tokens), kind).toEqual(
        Array.from(wasm.results[i]!.tokens),
      );
      webgpu.results[i]!.logProbs.forEach((p, t) => {
        expect(Math.abs(p - wasm.results[i]!.logProbs[t]!), kind).toBeLessThan(1e-4);
      });
    });
  }, 300_000);

  it('attends a batch of sequences in one launch per layer (their caches share a page pool)', async () => {
    await initBackend('webgpu');
    const model = DecoderModel.random(config, 14);
    const session = new GenerationSession({ model, prefillChunk: 16 });
    const prompts = [9, 23, 40, 4].map((n, b) =>
      Int32Array.from({ length: n }, (_, t) => (3 * t + b) % config.vocab_size),
    );
    await session.prefill(prompts);
    const caches = session.caches as DeviceKVCache[];
    expect(new Set(caches.map((cache) => cache.poolOf(0))).size).toBe(1);
    const before = deviceCounters().dispatches;
    const reads = vi.spyOn(tf.Tensor.prototype, 'data');
    const batched = await session.step([0, 1, 2, 3], Int32Array.of(1, 2, 3, 4));
    // per layer, for the four sequences together: the RoPE-rows pass, the paged attention, its
    // merge, and the appends' scatter of the new keys and values from the step's rows
    expect(deviceCounters().dispatches - before).toBe(4 * config.num_hidden_layers);
    // no read per layer (q, k and v were 3 each): the rows' non-finite flags once at the step's
    // end (the keys and values stay on the device), then the session's logits and hidden states
    expect(reads).toHaveBeenCalledTimes(3);
    expect(caches.every((cache) => !cache.hostKeys)).toBe(true);
    reads.mockRestore();
    expect(batched.logits).toHaveLength(4);
    session.dispose();
    model.dispose();
  }, 120_000);

  it.each([
    [
      'one keeps a query window, its queries copied into a ring on the device',
      'window',
      'q_proj',
      'queries',
    ],
    ['none records queries', 'none', 'k_proj', 'keys'],
    ["one tracks attention (H2O's, accumulated from the rows)", 'tracking', 'q_proj', 'queries'],
  ] as const)(
    'a device step whose new entries are not finite changes no cache and leaks nothing (%s)',
    async (_, recording, weight, kind) => {
      await initBackend('webgpu');
      const model = lively(config, 21);
      const reference = lively(config, 21);
      const device = (tf.backend() as unknown as { device: GPUDevice }).device;
      const records =
        recording === 'window'
          ? { queryWindow: 2 }
          : recording === 'tracking'
            ? { trackAttention: true }
            : {};
      const make = () => [
        new DeviceKVCache(cacheOptionsFor(config, records), device),
        new DeviceKVCache(cacheOptionsFor(config), device),
      ];
      const caches = make();
      const referenceCaches = make();
      const prompts = [Int32Array.of(1, 2, 3), Int32Array.of(4, 5)];
      const logitsOf = async (out: { logits: tf.Tensor; hidden: tf.Tensor }) => {
        const data = Array.from(await out.logits.data());
        tf.dispose([out.logits, out.hidden]);
        return data;
      };
      await logitsOf(await model.prefillAsync(caches, prompts));
      await logitsOf(await reference.prefillAsync(referenceCaches, prompts));
      // the keys as the device holds them (the caches keep none on the host)
      const snapshot = () =>
        Promise.all(
          caches.map(async (cache) => {
            const layers = [];
            for (let l = 0; l < config.num_hidden_layers; l++) {
              const tracked = cache.trackAttention;
              const observed = await cache.observeAsync(l, {
                ...NO_NEEDS,
                keys: true,
                accumulatedAttention: tracked,
                attentionWindow: cache.queryWindow,
              });
              layers.push({
                length: cache.length(l),
                live: Array.from(cache.liveCounts(l)),
                keys: Array.from(observed.keys!),
                sums: tracked ? Array.from(observed.accumulatedAttention!) : [],
                window: Array.from(observed.queries ?? []),
              });
            }
            return layers;
          }),
        );
      const before = await snapshot();
      const restore = poisonWeight(model, `model.layers.1.self_attn.${weight}.weight`);
      await expectRefusedStep(
        () => model.decodeStepAsync(caches, Int32Array.of(6, 7)),
        `layer 1 produced ${kind} with a non-finite value (NaN)`,
      );
      expect(await snapshot()).toEqual(before);
      restore();
      // the failed step left no trace: the next one gives exactly the logits of a run without it
      const reads = vi.spyOn(tf.Tensor.prototype, 'data');
      const next = await model.decodeStepAsync(caches, Int32Array.of(6, 7));
      const read = reads.mock.contexts.map((tensor) => (tensor as tf.Tensor).dtype);
      reads.mockRestore();
      // no layer's rows read back (float32), only their non-finite flags (int32): the keys,
      // values and recorded queries stay on the device
      expect(read).toEqual(['int32']);
      expect(await logitsOf(next)).toEqual(
        await logitsOf(await reference.decodeStepAsync(referenceCaches, Int32Array.of(6, 7))),
      );
      for (const cache of [...caches, ...referenceCaches]) cache.dispose();
      model.dispose();
      reference.dispose();
    },
    60_000,
  );

  it('refuses a batch that would attend on the host with a device cache keeping its keys on the device', async () => {
    await initBackend('webgpu');
    const device = (tf.backend() as unknown as { device: GPUDevice }).device;
    const model = DecoderModel.random(config, 15);
    const lean = new DeviceKVCache(cacheOptionsFor(config), device);
    const mirrored = new DeviceKVCache({ ...cacheOptionsFor(config), hostKeys: true }, device);
    const tensors = tf.memory().numTensors;
    await expect(
      model.prefillAsync([cacheFor(config), lean], [PROMPT, PROMPT]),
    ).rejects.toMatchObject({ code: 'E_ARG', argument: 'caches[1]' });
    expect(tf.memory().numTensors).toBe(tensors);
    expect(lean.length(0)).toBe(0);
    // with a host copy of its keys, the same batch attends on the host
    const out = await model.prefillAsync([cacheFor(config), mirrored], [PROMPT, PROMPT]);
    expect(out.logits.shape).toEqual([2, config.vocab_size]);
    await out.logits.data();
    tf.dispose([out.logits, out.hidden]);
    expect(mirrored.length(0)).toBe(PROMPT.length);
    lean.dispose();
    mirrored.dispose();
    model.dispose();
  }, 60_000);

  it('refuses the synchronous step there, naming the asynchronous one, and leaks nothing', async () => {
    await initBackend('webgpu');
    const gpuBefore = gpuBytes();
    const model = DecoderModel.random(config, 12);
    const cache = cacheFor(config);
    const before = tf.memory().numTensors;
    const error = expectLetheError(() => model.prefill([cache], [PROMPT]), 'E_STATE', 'backend');
    expect(error.message).toContain('prefillAsync');
    expectLetheError(() => model.embeddingRows(Int32Array.of(1)), 'E_STATE', 'backend');
    expect(tf.memory().numTensors).toBe(before);
    expect(cache.length(0)).toBe(0);
    const out = await model.prefillAsync([cache], [PROMPT]);
    expect(out.logits.shape).toEqual([1, config.vocab_size]);
    // read, as the runtime does: tfjs releases the buffers of work never submitted to the GPU
    // only at its next submission
    await out.logits.data();
    tf.dispose([out.logits, out.hidden]);
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
    expect(gpuBytes()).toBe(gpuBefore);
  }, 60_000);
});
