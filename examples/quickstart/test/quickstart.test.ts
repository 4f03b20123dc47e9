import { execFileSync, spawnSync } from 'node:child_process';
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
        '--capacity',
        '32',
        '--policies',
        'full,streaming-llm,h2o,snapkv',
      ],
      { cwd: root, encoding: 'utf8' },
    );
    for (const name of ['full', 'streaming-llm', 'h2o', 'snapkv'])
      expect(out).toContain(`── ${name}`);
    expect(out).toContain('── snapkv (capacity 32 entries per KV head) ──');
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

  /** Runs the CLI with `args`; its exit status, stdout and stderr. */
  function quickstart(...args: string[]) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  }

  it('refuses a --checkpoint that is not a model directory with one coded line, training nothing', () => {
    const run = quickstart('--checkpoint', '/nope/quickstart-model');
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^error: \[E_CHECKPOINT\] --checkpoint: \/nope\/quickstart-model is missing; .*npm run train -- --out \/nope\/quickstart-model/,
      ),
    ]);
    expect(run.stdout).not.toMatch(/train/);
    // A directory without the model's files is refused the same way.
    const notModel = quickstart('--checkpoint', join(root, 'src'));
    expect(notModel.status).toBe(2);
    expect(notModel.stderr).toMatch(
      /\[E_CHECKPOINT\] --checkpoint: .*src\/config\.json is missing \(train one/,
    );
  });

  it('takes its budget as --capacity (entries) and refuses --budget, --retrain and a bad capacity', () => {
    const budget = quickstart('--budget', '32');
    expect(budget.status).toBe(2);
    expect(budget.stderr).toMatch(/^error: \[E_ARG\] --budget: .*--capacity <entries per KV head>/);
    const retrain = quickstart('--retrain');
    expect(retrain.status).toBe(2);
    expect(retrain.stderr).toMatch(
      /\[E_ARG\] --retrain: training is its own command: `npm run train/,
    );
    const capacity = quickstart('--capacity', '0.5');
    expect(capacity.status).toBe(2);
    expect(capacity.stderr).toMatch(/\[E_BUDGET\] --capacity: must be an integer ≥ 2/);
  });

  it('is not the trainer: `npm run train` is, and refuses too few steps with one coded line', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/train.ts', '--steps', '2', '--out', join(root, 'never-written')],
      { cwd: root, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(
      'error: [E_ARG] --steps: must be an integer > 20 (the learning rate warms up over 20 steps), got 2',
    );
    expect(run.stdout).toBe('');
  });
});
