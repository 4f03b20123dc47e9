import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crossEntropyLoss } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHECKPOINT, loadQuickstart } from '../src/checkpoint-dir';
import { makeCorpus } from '../src/corpus';
import { quickstartConfig, quickstartTokenizer } from '../src/tiny-model';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

beforeAll(async () => {
  await initBackend('wasm');
});

describe('the committed quickstart checkpoint', () => {
  it('matches the training script (config and tokenizer)', async () => {
    const { model, tokenizer } = await loadQuickstart(DEFAULT_CHECKPOINT);
    const expected = quickstartTokenizer();
    expect(tokenizer.toJSON()).toEqual(expected.toJSON());
    const config = quickstartConfig(expected.vocabSize);
    for (const key of [
      'vocab_size',
      'hidden_size',
      'num_hidden_layers',
      'num_attention_heads',
      'num_key_value_heads',
    ] as const) {
      expect(model.config[key]).toBe(config[key]);
    }
  });

  it('is trained: held-out loss far below the uniform baseline', async () => {
    const { model, tokenizer } = await loadQuickstart(DEFAULT_CHECKPOINT);
    const ids = tokenizer.encode(makeCorpus(40, 12345)).slice(0, 97);
    const loss = tf.tidy(() => {
      const inputs = tf.tensor2d(ids.slice(0, 96), [1, 96], 'int32');
      const targets = tf.tensor2d(ids.slice(1, 97), [1, 96], 'int32');
      return crossEntropyLoss(model.forward(inputs).logits, targets).dataSync()[0]!;
    });
    expect(loss).toBeLessThan(0.25 * Math.log(tokenizer.vocabSize));
  });
});

describe('the quickstart CLI', () => {
  it('prints tokens/s and live/peak KV entries per layer for each policy', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/main.ts',
        '--tokens',
        '120',
        '--budget',
        '32',
        '--policies',
        'full,streaming-llm,h2o,snapkv',
      ],
      { cwd: root, encoding: 'utf8' },
    );
    for (const name of ['full', 'streaming-llm', 'h2o', 'snapkv'])
      expect(out).toContain(`── ${name}`);
    expect(out).toMatch(/tok\/s \| live\/peak KV entries per layer: L0 \d+\/\d+ {2}L1 \d+\/\d+/);
  });

  it('rejects an unknown policy with a clear error', () => {
    expect(() =>
      execFileSync(process.execPath, ['--import', 'tsx', 'src/main.ts', '--policies', 'nope'], {
        cwd: root,
        encoding: 'utf8',
        stdio: 'pipe',
      }),
    ).toThrowError(/unknown policy "nope"/);
  });
});
