import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileBamKernel } from '../../scripts/compile-kernel.mjs';
import { BamKernel } from '../../src/scorer/bam-kernel';
import { BAM_KERNEL_WASM } from '../../src/scorer/bam-kernel-wasm';
import { BamScorer } from '../../src/scorer/bam-scorer';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import type { BamScorerSpec } from '../../src/scorer/scorer-spec';
import { randomArray } from './reference';

/** The kernel's scorer and the portable one on the same seeded genome. */
function pair(features: number, hidden: number, seed: number, scale: number) {
  const spec: BamScorerSpec = { kind: 'bam', features, hidden };
  const genome = randomArray(new Float64Array(scorerParameterCount(spec)), seed, scale);
  return {
    kernel: new BamScorer(spec, genome),
    portable: new BamScorer(spec, genome, { kernel: false }),
  };
}

/** Scores with both and expects the same bits (NaN as NaN). */
function expectSameBits(
  { kernel, portable }: ReturnType<typeof pair>,
  x: Float32Array,
  n: number,
): void {
  const fast = new Float32Array(n).fill(7);
  const slow = new Float32Array(n).fill(7);
  kernel.score(x, n, fast);
  portable.score(x, n, slow);
  expect(new Uint32Array(fast.buffer)).toEqual(new Uint32Array(slow.buffer));
}

describe('BAM kernel (WebAssembly SIMD)', () => {
  it('embeds exactly the bytes its WAT source compiles to', async () => {
    const compiled = await compileBamKernel();
    expect(Buffer.from(BAM_KERNEL_WASM, 'base64').equals(Buffer.from(compiled))).toBe(true);
  });

  it('stays under 4 KB, the most a browser compiles synchronously on its main thread', () => {
    expect(Buffer.from(BAM_KERNEL_WASM, 'base64').length).toBeLessThan(4096);
  });

  it('loads in Node (the tests would otherwise compare the portable form with itself)', () => {
    const weights = {
      Wq: new Float64Array(2),
      bq: new Float64Array(1),
      Wk: new Float64Array(2),
      bk: new Float64Array(1),
      Wv: new Float64Array(2),
      bv: new Float64Array(1),
      Wo: new Float64Array(4),
      bo: new Float64Array(4),
      w: new Float64Array(2),
      b: 0,
    };
    expect(BamKernel.load(2, 1, weights)).toBeInstanceOf(BamKernel);
  });

  it('scores with the same bits as the portable form: any F, H and n (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 41 }),
        fc.integer(),
        fc.constantFrom(0.1, 0.5, 1.5, 4),
        (f, h, n, seed, scale) => {
          const scorers = pair(f, h, seed, scale);
          const x = randomArray(new Float32Array(n * f), seed ^ 0x5bd1e995, 3);
          expectSameBits(scorers, x, n);
        },
      ),
    );
  });

  it('keeps the same bits at the default size over calls that grow and shrink n', () => {
    const scorers = pair(25, 32, 11, 0.3);
    for (const [k, n] of [67, 3, 250, 1, 129, 250, 0, 518].entries()) {
      const x = randomArray(new Float32Array(n * 25), 100 + k, 2);
      expectSameBits(scorers, x, n);
    }
  });

  it('gives NaN where the portable form does (a NaN feature) and reads only n · F features', () => {
    const scorers = pair(5, 6, 3, 1);
    const n = 9;
    const x = randomArray(new Float32Array(n * 5 + 10), 4, 1);
    x[4 * 5 + 2] = Number.NaN;
    x.fill(Number.NaN, n * 5);
    expectSameBits(scorers, x, n);
    const out = new Float32Array(n);
    scorers.kernel.score(x, n, out);
    expect(out.some(Number.isNaN)).toBe(true);
    expect(Number.isNaN(out[n - 1]!)).toBe(false);
  });
});
