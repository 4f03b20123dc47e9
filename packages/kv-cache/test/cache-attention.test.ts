import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { compileKernel } from '../scripts/compile-kernel.mjs';
import { AttentionKernel } from '../src/attend/attention-kernel';
import { ATTENTION_KERNEL_WASM } from '../src/attend/attention-kernel-wasm';
import { CacheAttention, exp32 } from '../src/index';
import { type AttentionCase, buildAttentionCase, runAttentionCase } from './attention-cases';

const U = 2 ** -24; // float32 unit roundoff

/** Random cases: ragged live sets, GQA 1/2/4, head dims 16–128 (or any, for the portable form). */
function arbitraryCase(headDims: fc.Arbitrary<number>, maxTokens: number) {
  return fc
    .record({
      kvHeads: fc.integer({ min: 1, max: 3 }),
      group: fc.constantFrom(1, 2, 4),
      headDim: headDims,
      pageSize: fc.constantFrom(1, 4, 16, 64),
      tokens: fc.integer({ min: 0, max: maxTokens }),
      gated: fc.boolean(),
      sparse: fc.boolean(),
      biased: fc.boolean(),
      chunkTokens: fc.constantFrom(0, 1, 1, 2, 7),
      spread: fc.constantFrom(0.25, 1, 3),
      seed: fc.nat(),
      keptShares: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
        minLength: 3,
        maxLength: 3,
      }),
    })
    .map(({ keptShares, ...c }): AttentionCase => {
      const kept = keptShares.slice(0, c.kvHeads).map((s) => Math.floor(s * c.tokens));
      // at least one entry to attend to: a chunk, or one kept entry per head
      return {
        ...c,
        kept,
        chunkTokens: kept.includes(0) ? Math.max(1, c.chunkTokens) : c.chunkTokens,
      };
    });
}

/**
 * The attention in float64 from the cache's packed view (an independent read of the cache) and a
 * tolerance for the float32 result: `maxV·(2·δs + 2γₙ + 16u)` with `δs` the rounding bound of a
 * score (`γ_d·Σ|q_c·k_c|·scale` plus the roundings of the scale and bias), `γₙ = n·u/(1 − n·u)` the
 * bound of an `n`-term sum (the softmax's denominator and each output's numerator), `16u` twice
 * exp32's error (a test below holds it within 8 ulps): a softmax output moves by at most
 * `2·maxV·max|δs|` when the scores move by `δs`.
 */
function reference(c: AttentionCase) {
  const { cache, reads } = buildAttentionCase(c);
  const view = cache.view(0);
  const out: number[] = [];
  const tolerance: number[] = [];
  const gamma = (n: number) => (n * U) / (1 - n * U);
  const scale = Math.fround(1 / Math.sqrt(c.headDim));
  for (const read of reads) {
    const h = read.head;
    const live = view.liveCounts[h]!;
    const ranges = read.ranges ?? Int32Array.of(0, live);
    const rows: { key: ArrayLike<number>; value: ArrayLike<number>; bias: number }[] = [];
    for (let r = 0; r < ranges.length; r += 2) {
      for (let i = ranges[r]!; i < ranges[r + 1]!; i++) {
        const at = (h * view.maxLive + i) * c.headDim;
        let bias = read.liveBias?.[i] ?? 0;
        if (view.gates !== undefined) bias += Math.log(view.gates[h * view.maxLive + i]!);
        rows.push({
          key: view.keys.subarray(at, at + c.headDim),
          value: view.values!.subarray(at, at + c.headDim),
          bias,
        });
      }
    }
    const tokens = Math.max(1, c.chunkTokens);
    const chunk = read.chunk;
    for (let t = 0; t < tokens; t++) {
      const seen = [...rows];
      for (let u = 0; chunk !== undefined && u <= t; u++) {
        seen.push({
          key: chunk.keys.subarray(u * c.headDim, (u + 1) * c.headDim),
          value: chunk.values.subarray(u * c.headDim, (u + 1) * c.headDim),
          bias: chunk.bias?.[u] ?? 0,
        });
      }
      const maxV = Math.max(...seen.flatMap((row) => Array.from(row.value, Math.abs)));
      for (let g = 0; g < c.group; g++) {
        const at = (t * c.group + g) * c.headDim;
        const q = read.queries.subarray(at, at + c.headDim);
        let maxError = 0;
        const scores = seen.map((row) => {
          let dot = 0;
          let magnitude = 0;
          for (let d = 0; d < c.headDim; d++) {
            dot += q[d]! * row.key[d]!;
            magnitude += Math.abs(q[d]! * row.key[d]!);
          }
          const score = dot * scale + row.bias;
          maxError = Math.max(
            maxError,
            gamma(c.headDim + 2) * magnitude * scale +
              2 * U * Math.abs(score) +
              4 * U * Math.abs(row.bias),
          );
          return score;
        });
        const max = Math.max(...scores);
        const weights = scores.map((s) => Math.exp(s - max));
        const sum = weights.reduce((a, b) => a + b, 0);
        for (let d = 0; d < c.headDim; d++) {
          out.push(seen.reduce((acc, row, j) => acc + weights[j]! * row.value[d]!, 0) / sum);
          tolerance.push(maxV * (2 * maxError + 2 * gamma(seen.length + 1) + 16 * U) + 1e-30);
        }
      }
    }
  }
  return { out, tolerance };
}

describe('decode attention kernel (WebAssembly SIMD)', () => {
  it('embeds exactly the bytes its WAT source compiles to', async () => {
    const compiled = await compileKernel('attention');
    expect(Buffer.from(ATTENTION_KERNEL_WASM, 'base64').equals(Buffer.from(compiled))).toBe(true);
  });

  it('stays under 4 KB, the most a browser compiles synchronously on its main thread', () => {
    expect(Buffer.from(ATTENTION_KERNEL_WASM, 'base64').length).toBeLessThan(4096);
  });

  it('loads in Node, so the tests compare the kernel and not the portable form twice', () => {
    expect(AttentionKernel.load()).toBeInstanceOf(AttentionKernel);
    expect(CacheAttention.create().simd).toBe(true);
    expect(CacheAttention.create({ portable: true }).simd).toBe(false);
  });

  it('is absent, not an error, where compiling WebAssembly is refused (a strict CSP)', () => {
    const refuse = vi.spyOn(WebAssembly, 'Module').mockImplementation(function refused() {
      throw new WebAssembly.CompileError('WebAssembly compilation is disallowed');
    });
    try {
      expect(AttentionKernel.load()).toBeUndefined();
    } finally {
      refuse.mockRestore();
    }
  });

  it('computes the portable form bit for bit (ragged live sets, sparse reads, biases, gates)', () => {
    fc.assert(
      fc.property(arbitraryCase(fc.constantFrom(16, 32, 64, 128), 300), (c) => {
        const { kernel, portable } = runAttentionCase(c);
        expect(kernel).toEqual(portable);
      }),
      { numRuns: 150 },
    );
  });

  it('computes it bit for bit over 8k-entry contexts', () => {
    for (const [headDim, group, seed] of [
      [16, 4, 1],
      [128, 2, 2],
    ] as const) {
      const c: AttentionCase = {
        kvHeads: 2,
        group,
        headDim,
        pageSize: 16,
        tokens: 8192,
        kept: [8192, 6000],
        gated: seed === 2,
        sparse: false,
        biased: true,
        chunkTokens: 1,
        spread: 1,
        seed,
      };
      const { kernel, portable } = runAttentionCase(c);
      expect(kernel).toEqual(portable);
    }
  });
});

describe('CacheAttention', () => {
  it('equals float64 attention over the packed view within the float32 rounding bound', () => {
    fc.assert(
      fc.property(arbitraryCase(fc.integer({ min: 1, max: 40 }), 200), (c) => {
        const expected = reference(c);
        for (const form of Object.values(runAttentionCase(c))) {
          form.forEach((value, i) => {
            expect(Math.abs(value - expected.out[i]!)).toBeLessThanOrEqual(expected.tolerance[i]!);
          });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('reads only the ranges it is given and says how many entries it read', () => {
    const c: AttentionCase = {
      kvHeads: 1,
      group: 2,
      headDim: 8,
      pageSize: 4,
      tokens: 40,
      kept: [40],
      gated: false,
      sparse: false,
      biased: false,
      chunkTokens: 0,
      spread: 1,
      seed: 9,
    };
    const { cache, reads } = buildAttentionCase(c);
    const gather = vi.spyOn(cache, 'gather');
    const out = new Float32Array(16);
    const read = CacheAttention.create().attend(
      { ...reads[0]!, ranges: Int32Array.of(4, 8, 20, 23) },
      out,
      0,
    );
    expect(read).toBe(7);
    expect(gather.mock.calls[0]![2]).toEqual(Int32Array.of(4, 8, 20, 23));
  });

  it('names the argument that is too short', () => {
    const c: AttentionCase = {
      kvHeads: 1,
      group: 2,
      headDim: 8,
      pageSize: 4,
      tokens: 5,
      kept: [5],
      gated: false,
      sparse: false,
      biased: false,
      chunkTokens: 0,
      spread: 1,
      seed: 1,
    };
    const { reads } = buildAttentionCase(c);
    const attention = CacheAttention.create();
    const out = new Float32Array(16);
    const short = new Float32Array(3);
    expect(() => attention.attend({ ...reads[0]!, queries: short }, out, 0)).toThrow(/queries/);
    expect(() => attention.attend({ ...reads[0]!, liveBias: short }, out, 0)).toThrow(/liveBias/);
    const chunk = { keys: new Float32Array(8), values: new Float32Array(8) };
    expect(() =>
      attention.attend({ ...reads[0]!, chunk: { ...chunk, keys: short } }, out, 0),
    ).toThrow(/chunk\.keys/);
    expect(() =>
      attention.attend({ ...reads[0]!, chunk: { ...chunk, values: short } }, out, 0),
    ).toThrow(/chunk\.values/);
    expect(() => attention.attend({ ...reads[0]!, ranges: new Int32Array(0) }, out, 0)).toThrow(
      /ranges/,
    );
  });
});

describe('exp32', () => {
  const ulpsFromExp = (x: number) => {
    const exact = Math.exp(x);
    const ulp = 2 ** (Math.floor(Math.log2(exact)) - 23);
    return Math.abs(exp32(x) - exact) / ulp;
  };

  it('is within 8 float32 ulps of e^x on [−87, 0] (a grid and random points)', () => {
    let worst = 0;
    for (let i = 0; i <= 87_000; i++) worst = Math.max(worst, ulpsFromExp(Math.fround(-i / 1000)));
    fc.assert(
      fc.property(fc.float({ min: -87, max: 0, noNaN: true }), (x) => {
        expect(ulpsFromExp(x)).toBeLessThanOrEqual(8);
      }),
    );
    expect(worst).toBeLessThanOrEqual(8);
    expect(exp32(0)).toBe(1);
  });

  it('is 0 below −87 and NaN for NaN', () => {
    expect(exp32(-87.5)).toBe(0);
    expect(exp32(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(exp32(Number.NaN)).toBeNaN();
  });
});
