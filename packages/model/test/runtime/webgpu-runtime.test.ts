import type { KVCache } from '@lethe/kv-cache';
import { H2OPolicy, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { ensureWebGpu, initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecoderModel, GenerationSession } from '../../src/index';
import { cacheFor, tinyConfig } from '../decoder/helpers';

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

const config = tinyConfig({ max_position_embeddings: 256 });
const PROMPT = Int32Array.from({ length: 40 }, (_, i) => (7 * i + 3) % config.vocab_size);
const FED = Int32Array.from({ length: 96 }, (_, i) => (5 * i + 1) % config.vocab_size);

/** Teacher-forced logits of a session over the prompt and `FED`, and each layer's live positions. */
async function run(backend: 'wasm' | 'webgpu', eviction?: 'streaming-llm' | 'h2o') {
  await initBackend(backend);
  const gpuBefore = gpuBytes();
  const model = DecoderModel.random(config, 11);
  const budget = { budget: { capacity: 24 }, trigger: { whenLiveExceeds: 24, slack: 4 } };
  const policy =
    eviction === 'streaming-llm'
      ? new StreamingLLMPolicy(budget)
      : eviction === 'h2o'
        ? new H2OPolicy(budget)
        : undefined;
  const session = new GenerationSession({
    model,
    prefillChunk: 16,
    ...(policy === undefined ? {} : { eviction: policy }),
  });
  const logits: Float32Array[] = [(await session.prefill([PROMPT])).logits[0]!];
  for (const token of FED) logits.push((await session.step([0], Int32Array.of(token))).logits[0]!);
  const cache = session.caches[0] as KVCache;
  const live = Array.from({ length: config.num_hidden_layers }, (_, l) =>
    Array.from(cache.view(l).positions),
  );
  model.dispose();
  return { logits, live, backend: tf.getBackend(), gpuLeft: gpuBytes() - gpuBefore };
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

  for (const eviction of [undefined, 'streaming-llm', 'h2o'] as const) {
    it(`equals wasm over a prefill and ${FED.length} decode steps (${eviction ?? 'full cache'}): logits within 1e-5 relative, the same live entries`, async () => {
      const wasm = await run('wasm', eviction);
      const before = tf.memory().numTensors;
      const webgpu = await run('webgpu', eviction);
      expect(webgpu.backend).toBe('webgpu');
      expect(tf.memory().numTensors).toBe(before);
      expect(webgpu.gpuLeft).toBe(0);
      let worst = 0;
      wasm.logits.forEach((row, t) => {
        row.forEach((x, v) => {
          worst = Math.max(worst, Math.abs(x - webgpu.logits[t]![v]!) / (1 + Math.abs(x)));
        });
      });
      // the host does the attention on both; only the products, norms and MLP run on the GPU
      // (SwiftShader: a few float32 ulps here)
      expect(worst).toBeLessThan(1e-5);
      expect(webgpu.live).toEqual(wasm.live);
    }, 300_000); // SwiftShader: ~22 s here, ~30 s in CI beside other tests
  }

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
