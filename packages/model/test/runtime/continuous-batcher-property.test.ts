import { initBackend, tf } from '@lethe/tensor';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import { type BatchRequest, ContinuousBatcher } from '../../src/runtime/index';
import { lively, randomTokens, tinyConfig } from '../decoder/helpers';
import {
  generateAlone,
  LinearGate,
  POLICY_KINDS,
  type PolicyKind,
  policiesOf,
  turns,
} from './batcher-fixtures';

// A request's output must not depend on who shares its steps: whatever arrives and leaves when,
// each request generates exactly what it generates alone through generate().

const config = tinyConfig({ vocab_size: 31, max_position_embeddings: 96 });
let model: DecoderModel;
let gate: LinearGate;

beforeAll(async () => {
  await initBackend('wasm');
  model = lively(config, 23);
  gate = new LinearGate(config, 9);
});

afterAll(() => {
  gate.dispose();
});

/** One request of a generated scenario. */
interface Spec {
  /** Event-loop turns after the previous submission (the batcher steps once per turn or so). */
  readonly delay: number;
  readonly promptLength: number;
  readonly maxNewTokens: number;
  readonly kind: PolicyKind;
  /** `policiesOf`'s size: what a heuristic keeps, the gate policy's ceiling. */
  readonly size: number;
  readonly greedy: boolean;
  readonly topP: number;
  readonly seed: number;
  /** An EOS id, or none. */
  readonly eos: number | null;
  /** Index of the token at which its handler aborts it, or none. */
  readonly cancelAt: number | null;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  delay: fc.integer({ min: 0, max: 6 }),
  promptLength: fc.integer({ min: 1, max: 30 }),
  maxNewTokens: fc.integer({ min: 1, max: 20 }),
  kind: fc.constantFrom(...POLICY_KINDS),
  size: fc.integer({ min: 6, max: 14 }),
  greedy: fc.boolean(),
  topP: fc.double({ min: 0.5, max: 1, noNaN: true }),
  seed: fc.nat(10_000),
  eos: fc.option(fc.integer({ min: 0, max: config.vocab_size - 1 })),
  cancelAt: fc.option(fc.integer({ min: 0, max: 10 }), { freq: 4 }),
});

/** The request of `s`, with a fresh policy set. */
function requestOf(s: Spec): BatchRequest {
  return {
    prompt: randomTokens(s.seed, s.promptLength, config.vocab_size),
    maxNewTokens: s.maxNewTokens,
    sampling: s.greedy ? { temperature: 0 } : { temperature: 0.9, topP: s.topP },
    seed: s.seed,
    ...(s.eos === null ? {} : { stop: { eosTokenIds: [s.eos] } }),
    policies: policiesOf(s.kind, config, gate, s.size),
  };
}

describe('ContinuousBatcher determinism', () => {
  it('every request generates what it generates alone, whatever joins and leaves when', async () => {
    const before = tf.memory().numTensors;
    await fc.assert(
      fc.asyncProperty(
        fc.array(spec, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 2, max: 9 }),
        async (specs, maxSequences, prefillChunk) => {
          const batcher = new ContinuousBatcher({ model, maxSequences, maxQueue: 8, prefillChunk });
          const pending = [];
          for (const s of specs) {
            await turns(s.delay);
            const abort = new AbortController();
            pending.push(
              batcher.submit(
                { ...requestOf(s), signal: abort.signal },
                {
                  onToken: ({ index }) => {
                    if (index === s.cancelAt) abort.abort();
                    return true;
                  },
                },
              ),
            );
          }
          const results = await Promise.all(pending);
          await batcher.close();
          let generated = 0;
          for (const [i, s] of specs.entries()) {
            const alone = await generateAlone(model, requestOf(s), prefillChunk);
            const result = results[i]!;
            const tokens = Array.from(result.tokens);
            generated += tokens.length;
            if (s.cancelAt !== null && s.cancelAt < alone.tokens.length) {
              expect(result.finishReason).toBe('cancelled');
              expect(tokens).toEqual(alone.tokens.slice(0, s.cancelAt + 1));
            } else {
              expect(tokens).toEqual(alone.tokens);
              expect(Array.from(result.logProbs)).toEqual(
                Array.from(Float32Array.from(alone.logProbs)),
              );
              expect(result.finishReason).toBe(alone.finishReason);
            }
          }
          expect(batcher.stats()).toMatchObject({ queued: 0, active: 0, kvEntries: 0 });
          expect(batcher.stats().generatedTokens).toBe(generated);
        },
      ),
      { numRuns: 40, seed: 20_261_116, endOnFailure: true },
    );
    expect(tf.memory().numTensors).toBe(before);
  }, 240_000);
});
