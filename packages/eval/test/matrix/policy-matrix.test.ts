import { type DecoderModel, policyContextOf } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModel, toyTokenizer } from '../harness/toy';
import {
  accepts,
  isComputeProvider,
  MATRIX_MODES,
  MATRIX_PROVIDERS,
  matrixCases,
  modeBudget,
  prepareCase,
} from './matrix-cases';
import {
  computeGenerateLoop,
  controlsLoop,
  generateLoop,
  kvCacheLoop,
  loopContext,
} from './matrix-loops';

// The shared test matrix (as kvpress's tests/default_presses.py): every registered provider ×
// every mode its options and budget form take × {the KVCache loop, generate() on a tiny model}
// for eviction policies, {the controls loop, generate()} for compute policies. A provider joins
// by being registered (`DEFAULT_PROVIDERS`); a learned one also needs a fixture directory.

/** Capacity of the KVCache loop (60 tokens) and of generate() (prompts of 9–14 + 24 tokens). */
const LOOP_CAPACITY = 12;
const GENERATE_CAPACITY = 8;
const LOOPS = ['KVCache loop', 'generate()'] as const;

const cases = matrixCases();
const evictionCases = cases.filter(({ provider }) => !isComputeProvider(provider));
const computeCases = cases.filter(({ provider }) => isComputeProvider(provider));
const label = ({ provider, mode }: (typeof cases)[number]) => `${provider.name} × ${mode.name}`;

let model: DecoderModel;
beforeAll(async () => {
  await initBackend('cpu');
  model = tinyModel(3);
  console.log(
    `policy matrix: ${MATRIX_PROVIDERS.length} providers × ${MATRIX_MODES.length} modes (${cases.length} applicable pairs) × ${LOOPS.length} loops = ${cases.length * LOOPS.length} runs`,
  );
});
afterAll(() => {
  model.dispose();
});

describe('the policy matrix', () => {
  it('covers every provider in at least its default mode', () => {
    for (const provider of MATRIX_PROVIDERS) {
      const defaults = isComputeProvider(provider) ? 'compute-defaults' : 'defaults';
      expect(accepts(provider, MATRIX_MODES.find((m) => m.name === defaults)!)).toBe(true);
    }
    expect(cases.length).toBeGreaterThanOrEqual(MATRIX_PROVIDERS.length * 2);
    expect(computeCases.length).toBeGreaterThanOrEqual(4);
  });
});

describe.each(evictionCases.map((c) => [label(c), c] as const))('%s', (_, { provider, mode }) => {
  it('KVCache loop: within budget, anchors kept, valid indices, seeded, sequences isolated', async () => {
    const prepared = await prepareCase(provider, mode, loopContext(1).model);
    const build = (sequences: number) =>
      prepared.build(modeBudget(mode, LOOP_CAPACITY), loopContext(sequences)).eviction!;
    const batch = kvCacheLoop(build(2), [11, 12], 60, LOOP_CAPACITY, mode);
    // Same seed, same result; each sequence alone (fresh policy) ends as it did in the batch.
    expect(kvCacheLoop(build(2), [11, 12], 60, LOOP_CAPACITY, mode)).toEqual(batch);
    expect(kvCacheLoop(build(1), [11], 60, LOOP_CAPACITY, mode)).toEqual([batch[0]]);
    expect(kvCacheLoop(build(1), [12], 60, LOOP_CAPACITY, mode)).toEqual([batch[1]]);
    // The policy evicted: the loop ran far past the capacity.
    for (const heads of batch[0]!) {
      for (const live of heads) expect(live.length).toBeLessThan(60);
    }
    prepared.release();
  });

  it('generate(): within budget, anchors kept, valid indices, seeded, no leak, sequences isolated', async () => {
    const prepared = await prepareCase(provider, mode, policyContextOf(model, 1).model);
    const encode = (text: string) => toyTokenizer.encode(text, { addBos: true });
    const prompts = [encode('abcabcdefgh.'), encode('hgfedcba')];
    const batch = await generateLoop(prepared, model, prompts, [0, 1], GENERATE_CAPACITY, mode);
    expect(await generateLoop(prepared, model, prompts, [0, 1], GENERATE_CAPACITY, mode)).toEqual(
      batch,
    );
    for (const b of [0, 1]) {
      const alone = await generateLoop(
        prepared,
        model,
        [prompts[b]!],
        [b],
        GENERATE_CAPACITY,
        mode,
      );
      expect(alone.tokens[0]).toEqual(batch.tokens[b]);
      expect(alone.positions[0]).toEqual(batch.positions[b]);
    }
    prepared.release();
  });
});

describe.each(computeCases.map((c) => [label(c), c] as const))('%s', (_, { provider, mode }) => {
  it('controls loop: valid knobs on every layer, seeded, sequences isolated', async () => {
    const shape = policyContextOf(model, 1).model;
    const prepared = await prepareCase(provider, mode, shape);
    const build = (sequences: number) =>
      prepared.build(modeBudget(mode, 2), policyContextOf(model, sequences)).compute!;
    const batch = controlsLoop(build(2), [11, 12], 40, shape, 2);
    expect(controlsLoop(build(2), [11, 12], 40, shape, 2)).toEqual(batch);
    expect(controlsLoop(build(1), [11], 40, shape, 2)).toEqual([batch[0]]);
    expect(controlsLoop(build(1), [12], 40, shape, 2)).toEqual([batch[1]]);
    // The policy asked for less than dense compute somewhere: it is not the dense path.
    expect(batch.flat(2).some((layer) => Object.keys(layer).length > 0)).toBe(true);
    prepared.release();
  });

  it('generate(): no eviction, realised averages and refreshes recorded, seeded, no leak, sequences isolated', async () => {
    const prepared = await prepareCase(provider, mode, policyContextOf(model, 1).model);
    const encode = (text: string) => toyTokenizer.encode(text, { addBos: true });
    const prompts = [encode('abcabcdefgh.'), encode('hgfedcba')];
    const batch = await computeGenerateLoop(prepared, model, prompts, [0, 1], mode);
    expect(await computeGenerateLoop(prepared, model, prompts, [0, 1], mode)).toEqual(batch);
    for (const b of [0, 1]) {
      const alone = await computeGenerateLoop(prepared, model, [prompts[b]!], [b], mode);
      expect(alone.tokens[0]).toEqual(batch.tokens[b]);
      expect(alone.usage[0]).toEqual(batch.usage[b]);
      expect(alone.refreshes[0]).toBe(batch.refreshes[b]);
    }
    prepared.release();
  });
});
