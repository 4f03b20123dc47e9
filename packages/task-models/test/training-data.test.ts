import { createTask } from '@lethe/eval';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { generationBatches, REPLACEMENT_STRIDE } from '../src/generation-batches';
import { heldOutPrompts } from '../src/held-out-evaluation';
import { taskSequence } from '../src/task-sequence';
import { textWindowBatches } from '../src/text-window-batches';
import { isTrainingSeed, TRAINING_SEED_OFFSET, trainingSeed } from '../src/training-seed';

beforeAll(async () => {
  await initBackend('wasm');
});

async function rows(batch: { inputs: tf.Tensor2D; targets: tf.Tensor2D; mask: tf.Tensor2D }) {
  const [inputs, targets, mask] = await Promise.all([
    batch.inputs.array(),
    batch.targets.array(),
    batch.mask.array(),
  ]);
  tf.dispose(batch);
  return { inputs, targets, mask };
}

describe('training seeds', () => {
  it('are the pretraining seed plus an offset no evaluation seed reaches', () => {
    expect(TRAINING_SEED_OFFSET).toBe(1_000_000);
    expect(trainingSeed(0)).toBe(1_000_000);
    expect(trainingSeed(7)).toBe(1_000_007);
    expect(isTrainingSeed(999_999)).toBe(false);
    expect(isTrainingSeed(trainingSeed(0))).toBe(true);
    expect(expectLetheError(() => trainingSeed(-1)).argument).toBe('seed');
  });
});

describe('generation training sequences', () => {
  const task = createTask('arithmetic', { steps: 2 });

  it('are BOS + prompt + target + EOS with the loss on target and EOS only', () => {
    const example = task.example(trainingSeed(1), 0);
    const sequence = taskSequence(task, example);
    const t = task.tokenizer;
    const prompt = t.encode(example.prompt, { addBos: true });
    expect(Array.from(sequence.tokens as Int32Array)).toEqual([
      ...prompt,
      ...t.encode(example.target),
      t.eosId,
    ]);
    expect(sequence.promptLength).toBe(prompt.length);
  });

  it('take fresh examples of the training seed in step order and skip held-out prompts', async () => {
    const seed = trainingSeed(1);
    const batches = generationBatches(task, { seed, batchSize: 2 });
    const step1 = await rows(batches(1, new Rng(0)));
    const expected = taskSequence(task, task.example(seed, 3));
    const tokens = Array.from(expected.tokens);
    expect(step1.inputs[1]!.slice(0, tokens.length - 1)).toEqual(tokens.slice(0, -1));
    expect(step1.targets[1]!.slice(0, tokens.length - 1)).toEqual(tokens.slice(1));
    const trained = step1.mask[1]!.slice(0, tokens.length - 1);
    expect(trained.indexOf(1)).toBe(expected.promptLength! - 1);
    expect(trained.every((m, i) => m === (i + 1 >= expected.promptLength! ? 1 : 0))).toBe(true);

    // An example whose prompt is held out is replaced by one 2^40 indices further on.
    const excluded = new Set([task.example(seed, 0).prompt]);
    const skipping = await rows(
      generationBatches(task, { seed, batchSize: 1, exclude: excluded })(0, new Rng(0)),
    );
    const replacement = Array.from(
      taskSequence(task, task.example(seed, REPLACEMENT_STRIDE)).tokens,
    );
    expect(skipping.inputs[0]!.slice(0, replacement.length - 1)).toEqual(replacement.slice(0, -1));
  });

  it('with lossOn all, put the loss on every token after the first: the same batches otherwise', async () => {
    const seed = trainingSeed(1);
    const example = task.example(seed, 3);
    const sequence = taskSequence(task, example, 'all');
    expect(sequence.tokens).toEqual(taskSequence(task, example).tokens);
    expect(sequence.promptLength).toBe(0);
    const completion = await rows(generationBatches(task, { seed, batchSize: 2 })(1, new Rng(0)));
    const all = await rows(
      generationBatches(task, { seed, batchSize: 2, lossOn: 'all' })(1, new Rng(0)),
    );
    expect([all.inputs, all.targets]).toEqual([completion.inputs, completion.targets]);
    const n = sequence.tokens.length - 1;
    expect(all.mask[1]!.slice(0, n).every((m) => m === 1)).toBe(true);
    expect(all.mask[1]!.slice(n).every((m) => m === 0)).toBe(true);
  });

  it('sort the examples of bucketSteps updates by length, each example once', async () => {
    const countdown = createTask('countdown');
    const seed = trainingSeed(1);
    const bucketed = generationBatches(countdown, { seed, batchSize: 4, bucketSteps: 4 });
    const plain = generationBatches(countdown, { seed, batchSize: 4 });
    const seen: string[] = [];
    let bucketedWidth = 0;
    let plainWidth = 0;
    const ranges: [number, number][] = [];
    for (let step = 0; step < 4; step++) {
      const a = await rows(bucketed(step, new Rng(0)));
      const b = await rows(plain(step, new Rng(0)));
      bucketedWidth += a.inputs[0]!.length;
      plainWidth += b.inputs[0]!.length;
      const lengths = a.mask.map((m) => m.lastIndexOf(1) + 2);
      ranges.push([Math.min(...lengths), Math.max(...lengths)]);
      a.inputs.forEach((input, r) => {
        seen.push(
          countdown.tokenizer.decode(input.slice(0, a.mask[r]!.indexOf(1) + 1), {
            skipSpecialTokens: true,
          }),
        );
      });
    }
    const expected = Array.from({ length: 16 }, (_, i) => countdown.example(seed, i).prompt);
    expect(seen.sort()).toEqual(expected.sort());
    // Length ranges of the four batches do not interleave, and they pad less than unsorted ones.
    ranges.sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < ranges.length; i++)
      expect(ranges[i]![0]).toBeGreaterThanOrEqual(ranges[i - 1]![1]);
    expect(bucketedWidth).toBeLessThan(plainWidth);
  });

  it('never train on a held-out prompt, even in a small problem space', async () => {
    const small = createTask('arithmetic', { steps: 1 });
    const held = heldOutPrompts(small, 0, 32);
    const batches = generationBatches(small, {
      seed: trainingSeed(1),
      batchSize: 64,
      exclude: held,
    });
    const seen = new Set<string>();
    for (let step = 0; step < 4; step++) {
      const { inputs, mask } = await rows(batches(step, new Rng(0)));
      inputs.forEach((input, r) => {
        const promptEnd = mask[r]!.indexOf(1) + 1;
        seen.add(small.tokenizer.decode(input.slice(0, promptEnd), { skipSpecialTokens: true }));
      });
    }
    expect(seen.size).toBeGreaterThan(50);
    expect([...seen].filter((prompt) => held.has(prompt))).toEqual([]);
    // Without the exclusion the same steps would have repeated some held-out prompts.
    const plain = generationBatches(small, { seed: trainingSeed(1), batchSize: 64 });
    let repeats = 0;
    for (let step = 0; step < 4; step++) {
      const { inputs, mask } = await rows(plain(step, new Rng(0)));
      inputs.forEach((input, r) => {
        const prompt = small.tokenizer.decode(input.slice(0, mask[r]!.indexOf(1) + 1), {
          skipSpecialTokens: true,
        });
        if (held.has(prompt)) repeats += 1;
      });
    }
    expect(repeats).toBeGreaterThan(0);
  });

  it('give up with E_STATE when every prompt of the task is held out', () => {
    const tiny = createTask('arithmetic', { steps: 1, maxOperand: 2, maxValue: 3 });
    const held = heldOutPrompts(tiny, 0, 200);
    const batches = generationBatches(tiny, { seed: trainingSeed(1), batchSize: 1, exclude: held });
    const error = expectLetheError(() => batches(0, new Rng(0)));
    expect([error.code, error.argument]).toEqual(['E_STATE', 'exclude']);
  });
});

describe('language-model windows', () => {
  const task = createTask('lm', { documentChars: 32, trainingChars: 200 });

  it('cut windows of whole-document token sequences, deterministic per step generator', async () => {
    const batches = textWindowBatches(task, { seed: trainingSeed(1), batchSize: 3, window: 12 });
    const a = await rows(batches(4, new Rng(9).fork(4)));
    const b = await rows(batches(4, new Rng(9).fork(4)));
    expect(a).toEqual(b);
    expect(a.inputs).toHaveLength(3);
    expect(a.inputs[0]).toHaveLength(11);
    const text = task.trainingText(trainingSeed(1));
    for (const [r, input] of a.inputs.entries()) {
      // Every real token but the first is a target; a window from a short document is padded.
      const length = a.mask[r]!.lastIndexOf(1) + 1;
      expect(a.mask[r]!.slice(0, length).every((m) => m === 1)).toBe(true);
      expect(length).toBeGreaterThan(0);
      const ids = [...input.slice(0, length), a.targets[r]![length - 1]!];
      expect(text).toContain(task.tokenizer.decode(ids, { skipSpecialTokens: true }));
    }
  });

  it('reject a window below 2 tokens', () => {
    expect(
      expectLetheError(() => textWindowBatches(task, { seed: 1, batchSize: 1, window: 1 }))
        .argument,
    ).toBe('window');
  });
});
