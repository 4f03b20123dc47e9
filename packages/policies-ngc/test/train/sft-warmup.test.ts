import {
  type BatchProvider,
  CharTokenizer,
  DecoderModel,
  defaultConfig,
  type NextTokenBatch,
  nextTokenBatch,
  resizeVocabulary,
  type Tokenizer,
} from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { evictionRateTag } from '../../src/interoception';
import { interoceptionTokenizer } from '../../src/train/interoception-tokenizer';
import { sftWarmup } from '../../src/train/sft-warmup';
import {
  SFT_WARMUP_INDEX_OFFSET,
  SFT_WARMUP_REPLACEMENT_STRIDE,
  warmupTask,
} from '../../src/train/sft-warmup-task';

beforeAll(async () => {
  await initBackend('wasm');
});

/** A task whose example `(seed, index)` has the prompt `s<seed>i<index>`. */
interface NamedTask {
  readonly name: string;
  readonly tokenizer: Tokenizer;
  example(seed: number, index: number): { prompt: string; target: string };
}

function namedTask(): NamedTask {
  return {
    name: 'named',
    tokenizer: { vocabSize: 1 } as unknown as CharTokenizer,
    example: (seed, index) => ({ prompt: `s${seed}i${index}`, target: 'x.' }),
  };
}

/** A toy addition task over digits, in a character vocabulary that lacks the tag's characters. */
const SUMS = CharTokenizer.fromText('0123456789+=.');
const sumsTask = {
  tokenizer: SUMS as Tokenizer,
  example: (seed: number, index: number) => {
    const a = (seed * 7 + index) % 50;
    const b = (index * 13) % 50;
    return { prompt: `${a}+${b}=`, target: `${a + b}.` };
  },
};

/** Next-token batches of `task`'s examples of seed 0, slot `j` of `step` example `step · size + j`. */
function batchesOf(task: typeof sumsTask, size: number): BatchProvider<NextTokenBatch> {
  const { tokenizer } = task;
  return (step) =>
    nextTokenBatch(
      Array.from({ length: size }, (_, j) => {
        const example = task.example(0, step * size + j);
        const prompt = tokenizer.encode(example.prompt, { addBos: true });
        const target = tokenizer.encode(example.target, { addEos: true });
        return { tokens: [...prompt, ...target], promptLength: prompt.length };
      }),
      { padId: tokenizer.padId ?? 0, vocabSize: tokenizer.vocabSize },
    );
}

const tinyModel = (vocabSize: number): DecoderModel =>
  DecoderModel.random(
    defaultConfig({
      model_type: 'llama',
      vocab_size: vocabSize,
      hidden_size: 16,
      intermediate_size: 32,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
    }),
    1,
  );

const weights = (model: DecoderModel): Float32Array[] =>
  [...model.parameters.values()].map((v) => v.dataSync() as Float32Array);

describe('warmupTask', () => {
  it('draws past the RL prompts, skips held-out problems and tags prompts by index', () => {
    const task = namedTask();
    const tokenizer = { vocabSize: 2 } as unknown as CharTokenizer;
    const heldOut = new Set([`s7i${SFT_WARMUP_INDEX_OFFSET + 1}`]);
    const plain = warmupTask(task, heldOut);
    expect(plain.example(7, 0).prompt).toBe(`s7i${SFT_WARMUP_INDEX_OFFSET}`);
    expect(plain.example(7, 1).prompt).toBe(
      `s7i${SFT_WARMUP_INDEX_OFFSET + 1 + SFT_WARMUP_REPLACEMENT_STRIDE}`,
    );
    expect(plain.tokenizer).toBe(task.tokenizer);
    expect(plain.name).toBe('named');
    const tagged = warmupTask(task, heldOut, { tokenizer, rates: [0, 0.25] });
    expect(tagged.tokenizer).toBe(tokenizer);
    expect(tagged.example(7, 2).prompt).toBe(
      `s7i${SFT_WARMUP_INDEX_OFFSET + 2}${evictionRateTag(0)}`,
    );
    expect(tagged.example(7, 1).prompt).toBe(
      `s7i${SFT_WARMUP_INDEX_OFFSET + 1 + SFT_WARMUP_REPLACEMENT_STRIDE}${evictionRateTag(0.25)}`,
    );
    expect(tagged.example(7, 1).target).toBe('x.');
  });

  it('rejects an empty rate list and a rate outside [0, 1], naming them', () => {
    const tokenizer = SUMS;
    for (const rates of [[], [0.5, 1.5], [Number.NaN]]) {
      expectLetheError(
        () => warmupTask(namedTask(), new Set(), { tokenizer, rates }),
        'E_ARG',
        'interoception.rates',
      );
    }
  });
});

describe('sftWarmup', () => {
  it('trains on tagged prompts deterministically, leaks no tensor, and does nothing for 0 steps', async () => {
    const tokenizer = interoceptionTokenizer(SUMS);
    const runs: Float32Array[][] = [];
    for (const steps of [0, 2, 2]) {
      const base = tinyModel(SUMS.vocabSize);
      const model = resizeVocabulary(base, tokenizer.vocabSize);
      base.dispose();
      const before = weights(model);
      const tensors = tf.memory().numTensors;
      const prompts: string[] = [];
      const losses: number[] = [];
      await sftWarmup({
        model,
        task: sumsTask,
        steps,
        seed: 0,
        heldOut: new Set([sumsTask.example(0, SFT_WARMUP_INDEX_OFFSET).prompt]),
        batches: (warmup, size) => {
          expect(warmup.tokenizer).toBe(tokenizer);
          prompts.push(warmup.example(0, 0).prompt, warmup.example(0, 1).prompt);
          return batchesOf(warmup, size);
        },
        interoception: { tokenizer, rates: [0, 0.5] },
        onProgress: (_, loss) => losses.push(loss),
      });
      expect(tf.memory().numTensors).toBe(tensors);
      const after = weights(model);
      if (steps === 0) {
        expect(after).toEqual(before);
        expect(prompts).toEqual([]);
      } else {
        expect(after).not.toEqual(before);
        expect(losses).toHaveLength(steps);
        // Held out: example 0 is the replacement; both are tagged by their index.
        const replacement = SFT_WARMUP_INDEX_OFFSET + SFT_WARMUP_REPLACEMENT_STRIDE;
        expect(prompts).toEqual([
          `${sumsTask.example(0, replacement).prompt}${evictionRateTag(0)}`,
          `${sumsTask.example(0, SFT_WARMUP_INDEX_OFFSET + 1).prompt}${evictionRateTag(0.5)}`,
        ]);
      }
      runs.push(after);
      model.dispose();
    }
    expect(runs[2]).toEqual(runs[1]);
  });

  it('rejects a negative or fractional step count or seed, naming it', async () => {
    const model = tinyModel(SUMS.vocabSize);
    const options = {
      model,
      task: sumsTask,
      heldOut: new Set<string>(),
      batches: batchesOf,
    };
    for (const bad of [-1, 1.5]) {
      await expectLetheRejection(sftWarmup({ ...options, steps: bad, seed: 0 }), 'E_ARG', 'steps');
      await expectLetheRejection(sftWarmup({ ...options, steps: 1, seed: bad }), 'E_ARG', 'seed');
    }
    model.dispose();
  });
});
