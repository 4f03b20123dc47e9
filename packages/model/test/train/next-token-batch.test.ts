import { initBackend, Rng, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { nextTokenBatch, type SftExample, sampledBatches } from '../../src/train';
import { values } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

function disposeBatch(batch: ReturnType<typeof nextTokenBatch>): void {
  tf.dispose([batch.inputs, batch.targets, batch.mask, batch.inputMask]);
}

describe('nextTokenBatch', () => {
  it('shifts, pads and masks prompts as documented', () => {
    const batch = nextTokenBatch(
      [{ tokens: [1, 5, 7, 2], promptLength: 2 }, { tokens: Int32Array.from([9, 8]) }],
      { padId: 0, vocabSize: 10 },
    );
    expect(batch.inputs.shape).toEqual([2, 3]);
    expect(batch.inputs.dtype).toBe('int32');
    expect(batch.targets.dtype).toBe('int32');
    expect(batch.mask.dtype).toBe('float32');
    expect(values(batch.inputs)).toEqual([1, 5, 7, 9, 0, 0]);
    expect(values(batch.targets)).toEqual([5, 7, 2, 8, 0, 0]);
    expect(values(batch.mask)).toEqual([0, 1, 1, 1, 0, 0]);
    expect(values(batch.inputMask)).toEqual([1, 1, 1, 1, 0, 0]);
    expect(batch.tokens).toBe(3);
    disposeBatch(batch);
  });

  it('agrees with a brute-force construction for random examples and lengths', () => {
    const example = fc.record({
      tokens: fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 2, maxLength: 9 }),
      prompt: fc.nat(),
    });
    fc.assert(
      fc.property(fc.array(example, { minLength: 1, maxLength: 4 }), fc.nat(3), (raw, extra) => {
        const examples: SftExample[] = raw.map((e) => ({
          tokens: e.tokens,
          promptLength: e.prompt % e.tokens.length,
        }));
        const length = Math.max(...raw.map((e) => e.tokens.length)) - 1 + extra;
        const batch = nextTokenBatch(examples, { padId: 31, vocabSize: 32, length });
        const inputs: number[] = [];
        const targets: number[] = [];
        const mask: number[] = [];
        const inputMask: number[] = [];
        for (const { tokens, promptLength } of examples) {
          const ids = tokens as number[];
          for (let t = 0; t < length; t++) {
            const real = t < ids.length - 1;
            inputs.push(real ? ids[t]! : 31);
            targets.push(real ? ids[t + 1]! : 31);
            mask.push(real && t + 1 >= promptLength! ? 1 : 0);
            inputMask.push(real ? 1 : 0);
          }
        }
        expect(batch.inputs.shape).toEqual([examples.length, length]);
        expect(values(batch.inputs)).toEqual(inputs);
        expect(values(batch.targets)).toEqual(targets);
        expect(values(batch.mask)).toEqual(mask);
        expect(values(batch.inputMask)).toEqual(inputMask);
        expect(batch.tokens).toBe(mask.reduce((a, b) => a + b, 0));
        disposeBatch(batch);
      }),
      { numRuns: 50 },
    );
  });

  it('rejects bad examples and options naming the field', () => {
    const ok = { tokens: [1, 2, 3] };
    const cases: [() => unknown, string, string][] = [
      [() => nextTokenBatch([], { padId: 0 }), 'E_ARG', 'examples'],
      [() => nextTokenBatch([{ tokens: [1] }], { padId: 0 }), 'E_SHAPE', 'examples[0].tokens'],
      [
        () => nextTokenBatch([ok, { tokens: [1, -2] }], { padId: 0 }),
        'E_ARG',
        'examples[1].tokens[1]',
      ],
      [
        () => nextTokenBatch([{ tokens: [1, 2.5] }], { padId: 0 }),
        'E_ARG',
        'examples[0].tokens[1]',
      ],
      [() => nextTokenBatch([ok], { padId: 0, vocabSize: 3 }), 'E_ARG', 'examples[0].tokens[2]'],
      [() => nextTokenBatch([ok], { padId: 5, vocabSize: 5 }), 'E_ARG', 'padId'],
      [() => nextTokenBatch([ok], { padId: -1 }), 'E_ARG', 'padId'],
      [() => nextTokenBatch([ok], { padId: 0, vocabSize: 0 }), 'E_ARG', 'vocabSize'],
      [
        () => nextTokenBatch([{ tokens: [1, 2], promptLength: 2 }], { padId: 0 }),
        'E_ARG',
        'examples[0].promptLength',
      ],
      [
        () => nextTokenBatch([{ tokens: [1, 2], promptLength: -1 }], { padId: 0 }),
        'E_ARG',
        'examples[0].promptLength',
      ],
      [() => nextTokenBatch([ok], { padId: 0, length: 1 }), 'E_SHAPE', 'length'],
      [() => nextTokenBatch([ok], { padId: 0, length: 2.5 }), 'E_ARG', 'length'],
    ];
    const before = tf.memory().numTensors;
    for (const [fn, code, field] of cases) expectLetheError(fn, code, field);
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('sampledBatches', () => {
  const examples: SftExample[] = Array.from({ length: 10 }, (_, i) => ({
    tokens: Array.from({ length: 2 + (i % 4) }, (_, t) => (i + t) % 16),
  }));

  it('is a pure function of (step, rng) drawing batchSize examples from the pool', () => {
    const batches = sampledBatches(examples, { batchSize: 4, padId: 0, vocabSize: 16, length: 6 });
    const a = batches(3, new Rng(9).fork(3));
    const b = batches(3, new Rng(9).fork(3));
    const c = batches(4, new Rng(9).fork(4));
    expect(a.inputs.shape).toEqual([4, 6]);
    expect(values(a.inputs)).toEqual(values(b.inputs));
    expect(values(a.targets)).toEqual(values(b.targets));
    expect(values(a.inputs)).not.toEqual(values(c.inputs));
    // Every row is one of the pool's examples.
    const rows = values(a.targets);
    const candidates = examples.map((e) => {
      const ids = e.tokens as number[];
      return Array.from({ length: 6 }, (_, t) => (t < ids.length - 1 ? ids[t + 1]! : 0));
    });
    for (let r = 0; r < 4; r++) {
      expect(candidates).toContainEqual(rows.slice(r * 6, (r + 1) * 6));
    }
    for (const batch of [a, b, c]) disposeBatch(batch);
  });

  it('covers the pool roughly uniformly', () => {
    const batches = sampledBatches(examples, { batchSize: 1, padId: 0, length: 5 });
    const counts = new Map<number, number>();
    const rng = new Rng(3);
    for (let step = 0; step < 400; step++) {
      const batch = batches(step, rng.fork(step));
      const first = values(batch.inputs)[0]!;
      counts.set(first, (counts.get(first) ?? 0) + 1);
      disposeBatch(batch);
    }
    // First tokens are 0..9, one per example: each should appear 40 ± a few sigma.
    expect(counts.size).toBe(10);
    for (const count of counts.values()) expect(Math.abs(count - 40)).toBeLessThan(25);
  });

  it('validates batchSize and the whole pool up front', () => {
    expectLetheError(
      () => sampledBatches(examples, { batchSize: 0, padId: 0 }),
      'E_ARG',
      'batchSize',
    );
    expectLetheError(() => sampledBatches([], { batchSize: 1, padId: 0 }), 'E_ARG', 'examples');
    expectLetheError(
      () =>
        sampledBatches([...examples, { tokens: [1, 99] }], {
          batchSize: 1,
          padId: 0,
          vocabSize: 16,
        }),
      'E_ARG',
      'examples[10].tokens[1]',
    );
  });
});
