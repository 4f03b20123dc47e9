import { liveGpuBuffers } from '@lethe/kernels-webgpu';
import { FULL_CACHE } from '@lethe/kv-cache';
import { type DecoderModel, policyContextOf } from '@lethe/model';
import {
  accepts,
  computeGenerateLoop,
  generateLoop,
  MATRIX_MODES,
  matrixModel,
  matrixPrompts,
  providerKind,
  readGenerateLoop,
} from '@lethe/model/testing';
import { ensureWebGpu, initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROVIDERS } from '../src/default-registry';
import { prepareDefault } from './matrix-fixtures';

// Every registered provider, in its first mode, on tfjs's WebGPU backend — where the runtime's
// caches are `DeviceKVCache`s and attention is the paged WGSL kernel — against the same run on
// the CPU backend with host caches: the same greedy tokens and the same live positions at the
// end (eviction), the same realised compute (compute policies), the same entries read at every
// step (read selectors: Quest's pages ranked on the device), no GPU buffer left. WebGPU is
// SwiftShader here (Debian's chromium); in CI (CI=true) the test fails rather than skips.
const reason = await ensureWebGpu({ required: true }).then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
);
const skip = reason !== undefined && !process.env.CI;
if (skip) console.warn(`[@lethe/policies] WebGPU policy matrix skipped: ${reason}`);

/**
 * Policies that rank entries by their keys' L2 norm. Their decisions have exact ties here: layer
 * 0's key of a token depends on the token alone before RoPE, and RoPE is a rotation, so every
 * occurrence of a token has a key of the same norm, which float32 rounding (different on the GPU
 * and the CPU) orders one way or the other. For them the live keys' norms are compared instead
 * of their positions.
 */
const KEY_NORM_RANKED = new Set(['knorm', 'l2norm']);

/** Capacity of the evicting runs (prompts of 9–14 tokens + 24 generated). */
const CAPACITY = 8;

const firstModes = DEFAULT_PROVIDERS.filter((p) => p.name !== FULL_CACHE).map((provider) => ({
  provider,
  mode: MATRIX_MODES.find((mode) => accepts(provider, mode))!,
}));

describe.skipIf(skip)('every registered policy on the device cache (WebGPU) as on the CPU', () => {
  let models: Record<'cpu' | 'webgpu', DecoderModel>;
  beforeAll(async () => {
    await initBackend('cpu');
    const cpu = matrixModel();
    await initBackend('webgpu');
    models = { cpu, webgpu: matrixModel() };
  });
  afterAll(async () => {
    models.webgpu.dispose();
    await initBackend('cpu');
    models.cpu.dispose();
  });

  const prompts = matrixPrompts();

  it.each(firstModes.map((c) => [`${c.provider.name} × ${c.mode.name}`, c] as const))(
    '%s',
    async (_, { provider, mode }) => {
      const outcomes = [];
      for (const backend of ['cpu', 'webgpu'] as const) {
        await initBackend(backend);
        const model = models[backend];
        const buffers = liveGpuBuffers().buffers;
        const prepared = await prepareDefault(provider, mode, policyContextOf(model, 1).model);
        const kind = providerKind(provider);
        outcomes.push(
          kind === 'compute'
            ? await computeGenerateLoop(prepared, model, prompts, [0, 1], mode)
            : kind === 'read'
              ? await readGenerateLoop(prepared, model, prompts, [0, 1], mode)
              : await generateLoop(prepared, model, prompts, [0, 1], CAPACITY, mode),
        );
        prepared.release();
        expect(tf.getBackend()).toBe(backend);
        expect(liveGpuBuffers().buffers).toBe(buffers);
      }
      const [cpu, webgpu] = outcomes as [(typeof outcomes)[0], (typeof outcomes)[0]];
      if (!('positions' in cpu && 'positions' in webgpu)) {
        // compute policies: tokens, realised compute, refreshes. Read selectors: tokens, and the
        // entries each step read — a count that page-score ties cannot change: Quest reads the
        // newest page and its best older ones, every older page full (nothing is evicted), so
        // whichever of two tied pages the device or the host picks, the step reads as many
        // entries; which pages it read is not compared. (On the CPU the read modes' runs score no
        // two pages of a head alike, so none is expected; the count guards against one.)
        expect(webgpu).toEqual(cpu);
        return;
      }
      expect(webgpu.tokens).toEqual(cpu.tokens);
      if (!KEY_NORM_RANKED.has(provider.name)) {
        expect(webgpu.positions).toEqual(cpu.positions);
        return;
      }
      // ties aside: live keys of the same norms, place for place in ascending order, within
      // float32 rounding (1e-4 relative)
      cpu.keyNorms.flat(2).forEach((norms, i) => {
        const other = webgpu.keyNorms.flat(2)[i]!;
        expect(other).toHaveLength(norms.length);
        norms.forEach((norm, j) => {
          expect(Math.abs(other[j]! - norm)).toBeLessThanOrEqual(1e-4 * (1 + norm));
        });
      });
    },
    // about 24 s a case alone on SwiftShader; beside turbo's other test tasks on 2 slower cores a
    // CI run saw over 120 s
    600_000,
  );
});
