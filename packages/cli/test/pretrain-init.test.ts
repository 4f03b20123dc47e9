import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pretrainTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lethe, requireBuiltCli } from './run-lethe';

let dir: string;
/** A micro arithmetic task model (2 updates from a random start): what the run starts from. */
let base: string;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-cli-init-'));
  base = join(dir, 'base');
  const run = await pretrainTaskModel({
    task: 'arithmetic',
    taskOptions: { steps: 2 },
    modelSize: { hidden: 16, layers: 2, heads: 2, kvHeads: 1, intermediate: 32 },
    steps: 2,
    batchSize: 2,
    evalExamples: 0,
    out: base,
  });
  run.model.dispose();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('lethe pretrain --init', () => {
  it('names --init on the command line when the start does not fit the run', async () => {
    requireBuiltCli();
    const run = await lethe(
      ['pretrain', '--task', 'arithmetic', '--hidden', '8', '--init', base, '--out', 'x'],
      dir,
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(
      /lethe: \[E_ARG\] --init \(init\): .*config\.json has hidden_size 16, the run 8 \(modelSize\.hidden\)/,
    );
  });
});
