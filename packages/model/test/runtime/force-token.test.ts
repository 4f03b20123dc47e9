import { initBackend, Rng, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ForceTokenEvent, generate } from '../../src/runtime/generate';
import { logProbOf, sampleToken } from '../../src/runtime/sampling';
import { lively, tinyConfig } from '../decoder/helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const V = config.vocab_size;
const model = () => lively(config, 5);
const prompt = (n: number, offset = 0) =>
  Int32Array.from({ length: n }, (_, i) => (3 * i + offset) % V);

/** Parallel-forward logits of `tokens` (full causal attention), as host rows. */
function forwardRows(m: ReturnType<typeof model>, tokens: number[]): Float32Array[] {
  const T = tokens.length;
  return tf.tidy(() => {
    const ids = tf.tensor2d([tokens], [1, T], 'int32');
    const data = m.forward(ids).logits.dataSync() as Float32Array;
    return Array.from({ length: T }, (_, t) => data.slice(t * V, (t + 1) * V));
  });
}

/** `log softmax(row / temperature)[token]` in float64, written from the definition. */
function logSoftmaxAt(row: ArrayLike<number>, token: number, temperature: number): number {
  const scaled = Array.from(row, (v) => v / temperature);
  const max = Math.max(...scaled);
  const z = scaled.reduce((s, v) => s + Math.exp(v - max), 0);
  return scaled[token]! - max - Math.log(z);
}

const argmax = (row: Float32Array) => row.reduce((best, v, i) => (v > row[best]! ? i : best), 0);

describe('generate with forceToken', () => {
  it('emits the forced tokens where asked, scored by the temperature-scaled log-softmax', async () => {
    const m = model();
    const p = prompt(5);
    const forced = new Map([
      [0, 7],
      [3, 22],
      [4, 0],
      [9, 11],
    ]);
    const seen: { index: number; length: number }[] = [];
    const result = await generate({
      model: m,
      prompts: [p],
      maxNewTokens: 12,
      sampling: { temperature: 0.8 },
      seed: 3,
      forceToken: ({ sequence, index, caches }: ForceTokenEvent) => {
        seen.push({ index, length: caches[sequence]!.length(0) });
        return forced.get(index);
      },
    });
    const tokens = result.tokens[0]!;
    expect(tokens).toHaveLength(12);
    for (const [index, token] of forced) expect(tokens[index]).toBe(token);
    // The hook is asked once per generated token, with the cache holding prompt + earlier tokens.
    expect(seen).toEqual(Array.from(tokens, (_, index) => ({ index, length: p.length + index })));
    const rows = forwardRows(m, [...p, ...tokens]);
    tokens.forEach((token, i) => {
      const expected = logSoftmaxAt(rows[p.length - 1 + i]!, token, 0.8);
      expect(Math.abs(result.logProbs[0]![i]! - expected)).toBeLessThan(1e-4);
    });
    m.dispose();
  });

  it('draws nothing for a forced token and leaves other sequences of the batch alone', async () => {
    const m = model();
    const prompts = [prompt(4), prompt(6, 1)];
    const base = { model: m, prompts, maxNewTokens: 10, sampling: { temperature: 1 }, seed: 8 };
    const plain = await generate(base);
    const forcedAt = 4;
    const token = plain.tokens[0]![forcedAt]!;
    const forced = await generate({
      ...base,
      forceToken: ({ sequence, index }) =>
        sequence === 0 && index === forcedAt ? token : undefined,
    });
    // Same context up to and including the forced token, so the same log-probs there.
    expect(Array.from(forced.tokens[0]!.slice(0, forcedAt + 1))).toEqual(
      Array.from(plain.tokens[0]!.slice(0, forcedAt + 1)),
    );
    expect(forced.logProbs[0]![forcedAt]).toBeCloseTo(plain.logProbs[0]![forcedAt]!, 5);
    expect(Array.from(forced.tokens[1]!)).toEqual(Array.from(plain.tokens[1]!));
    // The next token is sampled with the uniform the plain run spent on the forced one.
    const rows = forwardRows(m, [...prompts[0]!, ...forced.tokens[0]!]);
    const stream = new Rng(8).fork('sample-0');
    for (let i = 0; i < forcedAt; i++) stream.uniform(1);
    const next = sampleToken(rows[prompts[0]!.length + forcedAt]!, { temperature: 1 }, stream);
    expect(forced.tokens[0]![forcedAt + 1]).toBe(next.token);
    m.dispose();
  });

  it('greedy: unforced tokens follow the argmax, a forced token scores 0 at the argmax and −∞ elsewhere', async () => {
    const m = model();
    const p = prompt(6, 2);
    const base = { model: m, prompts: [p], maxNewTokens: 8, sampling: { temperature: 0 } };
    const plain = await generate(base);
    const argmaxToken = plain.tokens[0]![1]!;
    const other = (plain.tokens[0]![4]! + 1) % V;
    const result = await generate({
      ...base,
      forceToken: ({ index }) => (index === 1 ? argmaxToken : index === 4 ? other : undefined),
    });
    const tokens = result.tokens[0]!;
    expect(tokens[1]).toBe(argmaxToken);
    expect(tokens[4]).toBe(other);
    const rows = forwardRows(m, [...p, ...tokens]);
    tokens.forEach((token, i) => {
      const row = rows[p.length - 1 + i]!;
      if (i !== 4) expect(token).toBe(argmax(row));
      expect(result.logProbs[0]![i]).toBe(token === argmax(row) ? 0 : Number.NEGATIVE_INFINITY);
    });
    expect(result.logProbs[0]![4]).toBe(Number.NEGATIVE_INFINITY);
    m.dispose();
  });

  it('rejects an id outside the vocabulary, naming forceToken, without leaking tensors', async () => {
    const m = model();
    const before = tf.memory().numTensors;
    for (const bad of [-1, V, 2.5, Number.NaN, null as unknown as number]) {
      await expect(
        generate({
          model: m,
          prompts: [prompt(3)],
          maxNewTokens: 5,
          forceToken: ({ index }) => (index === 2 ? bad : undefined),
        }),
      ).rejects.toMatchObject({ code: 'E_ARG', argument: 'forceToken' });
    }
    expect(tf.memory().numTensors).toBe(before);
    m.dispose();
  });
});

describe('logProbOf', () => {
  const logits = [2, 1.5, 0.3, -1, 0.9, 1.5];

  it("equals sampleToken's reported log-prob for every token it draws", () => {
    for (const options of [
      { temperature: 1 },
      { temperature: 0.7, topK: 3 },
      { temperature: 1.3, topP: 0.8 },
      { temperature: 1, topK: 4, topP: 0.6 },
    ]) {
      const rng = new Rng(2);
      for (let draw = 0; draw < 200; draw++) {
        const { token, logProb } = sampleToken(logits, options, rng);
        expect(logProbOf(logits, token, options)).toBe(logProb);
      }
    }
  });

  it('is the temperature-scaled log-softmax without filtering, −∞ outside top-k / top-p', () => {
    for (let token = 0; token < logits.length; token++) {
      expect(logProbOf(logits, token, { temperature: 0.6 })).toBeCloseTo(
        logSoftmaxAt(logits, token, 0.6),
        10,
      );
    }
    // Ranks: 0 (2), 1 and 5 (1.5, lower index first), 4, 2, 3.
    expect(logProbOf(logits, 5, { topK: 2 })).toBe(Number.NEGATIVE_INFINITY);
    expect(logProbOf(logits, 1, { topK: 2 })).toBeCloseTo(Math.log(1 / (1 + Math.exp(0.5))), 10);
    expect(logProbOf(logits, 3, { topP: 0.9 })).toBe(Number.NEGATIVE_INFINITY);
  });

  it('greedy: 0 for the argmax (lowest index among ties), −∞ for the rest', () => {
    expect(logProbOf([0.1, 3, 3, -1], 1, { temperature: 0 })).toBe(0);
    expect(logProbOf([0.1, 3, 3, -1], 2, { temperature: 0 })).toBe(Number.NEGATIVE_INFINITY);
  });

  it('rejects a token outside the row, naming token, and NaN logits', () => {
    for (const bad of [-1, 6, 1.5]) {
      expect(() => logProbOf(logits, bad, {})).toThrow(
        expect.objectContaining({ argument: 'token' }),
      );
    }
    expect(() => logProbOf([0, Number.NaN], 0, {})).toThrow(
      expect.objectContaining({ argument: 'logits' }),
    );
  });
});
