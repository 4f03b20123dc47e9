import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSafetensorsFile } from '../../src/io/node';
import {
  AdamW,
  clipByGlobalNorm,
  constantSchedule,
  decodeSftCheckpoint,
  type NextTokenBatch,
  type SftCheckpoint,
  SftTrainer,
  type SftTrainerOptions,
  sampledBatches,
  type TrainProgress,
  warmupCosineSchedule,
} from '../../src/train';
import { directoryCheckpointStore, SFT_CHECKPOINT_FILE } from '../../src/train/node';
import { bits } from './helpers';
import { type BigramModel, bigramLoss, bigramModel, cyclicExamples, snapshot } from './tiny-models';

const VOCAB = 8;
const DIM = 8;
const examples = cyclicExamples(7, 9);
const batches = sampledBatches(examples, { batchSize: 4, padId: 0, vocabSize: VOCAB });

let root: string;
const models: BigramModel[] = [];

function model(seed: number): BigramModel {
  const m = bigramModel(seed, VOCAB, DIM);
  models.push(m);
  return m;
}

function options(
  m: BigramModel,
  overrides: Partial<SftTrainerOptions<NextTokenBatch>> = {},
): SftTrainerOptions<NextTokenBatch> {
  return {
    model: m,
    loss: bigramLoss(m),
    batches,
    steps: 12,
    seed: 7,
    schedule: warmupCosineSchedule({
      peakLr: 0.05,
      warmupSteps: 3,
      totalSteps: 12,
      minLrRatio: 0.1,
    }),
    optimizer: { weightDecay: 0.01 },
    clipNorm: 1,
    ...overrides,
  };
}

/** The checkpoint stored in `dir`, or undefined. */
async function readSftCheckpoint(dir: string): Promise<SftCheckpoint | undefined> {
  const bytes = await directoryCheckpointStore(dir).read();
  return bytes === undefined ? undefined : decodeSftCheckpoint(bytes);
}

beforeAll(async () => {
  await initBackend('wasm');
  root = await mkdtemp(join(tmpdir(), 'lethe-sft-'));
});

afterAll(async () => {
  for (const m of models.splice(0)) m.dispose();
  await rm(root, { recursive: true, force: true });
});

describe('SftTrainer', () => {
  it('trains a tiny bigram model: the loss drops substantially', async () => {
    const m = model(1);
    const evaluate = (): number =>
      tf.tidy(() => {
        const all = sampledBatches(examples, { batchSize: 32, padId: 0 })(0, new Rng(99));
        const loss = bigramLoss(m)(all);
        tf.dispose(Object.values(all));
        return loss.dataSync()[0]!;
      });
    const before = evaluate();
    const losses: number[] = [];
    const trainer = new SftTrainer(
      options(m, {
        steps: 60,
        schedule: warmupCosineSchedule({ peakLr: 0.05, warmupSteps: 5, totalSteps: 60 }),
        onProgress: (p) => losses.push(p.loss),
      }),
    );
    const result = await trainer.train();
    trainer.dispose();
    expect(result).toEqual({ step: 60, loss: losses[59], stopped: false, resumedFrom: 0 });
    expect(losses).toHaveLength(60);
    const after = evaluate();
    expect(before).toBeGreaterThan(1.5);
    expect(after).toBeLessThan(0.1 * before);
    expect(losses[59]!).toBeLessThan(0.2 * losses[0]!);
  });

  it('keeps the tensor count stable across steps and leaves nothing behind', async () => {
    const m = model(2);
    const counts: number[] = [];
    const trainer = new SftTrainer(
      options(m, { steps: 8, onProgress: () => counts.push(tf.memory().numTensors) }),
    );
    const before = tf.memory().numTensors;
    await trainer.train();
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBe(before);
    expect(tf.memory().numTensors).toBe(before);
    trainer.dispose();
    expect(tf.memory().numTensors).toBe(before - 2 * m.parameters.size);
  });

  it('one step equals clip + AdamW applied by hand to the same batch, and reports it', async () => {
    const a = model(3);
    const b = model(3);
    const optimizer = { epsilon: 1, weightDecay: 0.1 }; // ε = 1 makes the update scale-sensitive
    const lossFn = bigramLoss(b);
    const batch = batches(0, new Rng(7).fork(0));
    const { value, grads } = tf.variableGrads(() => lossFn(batch), [...b.parameters.values()]);
    const byName = new Map([...b.parameters].map(([name, v]) => [name, grads[v.name]!]));
    const clipped = clipByGlobalNorm(byName, 0.05);
    const expectedLoss = value.dataSync()[0]!;
    const expectedNorm = clipped.norm.dataSync()[0]!;
    expect(expectedNorm).toBeGreaterThan(0.05); // clipping is active
    const manual = new AdamW(b.parameters, optimizer);
    manual.applyGradients(clipped.grads, 0.1);
    tf.dispose([value, clipped.norm, ...byName.values(), ...clipped.grads.values()]);
    const expectedTokens = batch.tokens;
    tf.dispose([batch.inputs, batch.targets, batch.mask, batch.inputMask]);
    manual.dispose();

    const reports: TrainProgress[] = [];
    let clock = 1000;
    const trainer = new SftTrainer(
      options(a, {
        steps: 1,
        clipNorm: 0.05,
        optimizer,
        schedule: constantSchedule(0.1),
        onProgress: (p) => reports.push(p),
        now: () => (clock += 250),
      }),
    );
    await trainer.train();
    trainer.dispose();
    for (const [name, v] of a.parameters) {
      expect(bits(v.dataSync() as Float32Array), name).toEqual(
        bits(b.parameters.get(name)!.dataSync() as Float32Array),
      );
    }
    expect(reports).toEqual([
      {
        step: 1,
        totalSteps: 1,
        loss: expectedLoss,
        lr: 0.1,
        gradNorm: expectedNorm,
        tokensPerSecond: expectedTokens / 0.25,
        elapsedSeconds: 0.25,
        etaSeconds: 0,
      },
    ]);
  });

  it('reports throughput and ETA from its clock', async () => {
    const reports: TrainProgress[] = [];
    let clock = 0;
    const trainer = new SftTrainer(
      options(model(4), {
        steps: 4,
        onProgress: (p) => reports.push(p),
        now: () => (clock += 500),
      }),
    );
    await trainer.train();
    trainer.dispose();
    expect(reports.map((r) => r.step)).toEqual([1, 2, 3, 4]);
    expect(reports.map((r) => r.elapsedSeconds)).toEqual([0.5, 1, 1.5, 2]);
    expect(reports.map((r) => r.etaSeconds)).toEqual([1.5, 1, 0.5, 0]);
    const schedule = options(model(4)).schedule;
    expect(reports.map((r) => r.lr)).toEqual([0, 1, 2, 3].map(schedule));
    // Every batch holds 4 windows of 8 targets.
    expect(reports.map((r) => r.tokensPerSecond)).toEqual([64, 64, 64, 64]);
  });

  it('awaits afterUpdate after every update, before its checkpoint write, and trains on as before', async () => {
    const plain = model(6);
    const reference = new SftTrainer(options(plain, { steps: 4 }));
    await reference.train();
    reference.dispose();
    const probed = model(6);
    const dir = await mkdtemp(join(root, 'after-update-'));
    const seen: { step: number; saved: boolean }[] = [];
    const trainer = new SftTrainer(
      options(probed, {
        steps: 4,
        checkpoint: directoryCheckpointStore(dir),
        checkpointEvery: 2,
        afterUpdate: async (step) => {
          // A probe reads the weights (and allocates tensors of its own) between updates.
          tf.tidy(() => [...probed.parameters.values()].map((v) => tf.sum(v)));
          await new Promise((done) => setTimeout(done, 1));
          const saved = await stat(join(dir, SFT_CHECKPOINT_FILE)).then(
            () => true,
            () => false,
          );
          seen.push({ step, saved });
        },
      }),
    );
    await trainer.train();
    trainer.dispose();
    // The first state write follows update 2's call, so update 2 saw no state yet.
    expect(seen).toEqual([
      { step: 1, saved: false },
      { step: 2, saved: false },
      { step: 3, saved: true },
      { step: 4, saved: true },
    ]);
    for (const [name, v] of probed.parameters) {
      expect(bits(v.dataSync() as Float32Array), name).toEqual(
        bits(plain.parameters.get(name)!.dataSync() as Float32Array),
      );
    }
  });

  it('resumes bit-identically after an abort and after a crash', async () => {
    const straight = model(5);
    const reference = new SftTrainer(options(straight));
    await reference.train();
    const expectedState = await reference.optimizer.exportState();
    reference.dispose();

    for (const mode of ['abort', 'crash'] as const) {
      const dir = join(root, `resume-${mode}`);
      const first = model(5);
      const controller = new AbortController();
      const interrupted = new SftTrainer(
        options(first, {
          checkpoint: directoryCheckpointStore(dir),
          checkpointEvery: 4,
          signal: controller.signal,
          onProgress: (p) => {
            if (p.step !== 6) return;
            if (mode === 'abort') controller.abort();
            else throw new Error('simulated crash');
          },
        }),
      );
      if (mode === 'abort') {
        expect(await interrupted.train()).toMatchObject({ step: 6, stopped: true });
        expect((await readSftCheckpoint(dir))!.step).toBe(6);
      } else {
        await expect(interrupted.train()).rejects.toThrow('simulated crash');
        expect((await readSftCheckpoint(dir))!.step).toBe(4);
      }
      interrupted.dispose();

      // A fresh process: another initialisation, which the checkpoint must overwrite.
      const second = model(123);
      const steps: number[] = [];
      const resumed = new SftTrainer(
        options(second, {
          checkpoint: directoryCheckpointStore(dir),
          checkpointEvery: 4,
          onProgress: (p) => steps.push(p.step),
        }),
      );
      const result = await resumed.train();
      const from = mode === 'abort' ? 6 : 4;
      expect(result).toMatchObject({ step: 12, stopped: false, resumedFrom: from });
      expect(steps[0]).toBe(from + 1);
      for (const [name, v] of straight.parameters) {
        expect(
          bits(second.parameters.get(name)!.dataSync() as Float32Array),
          `${mode} ${name}`,
        ).toEqual(bits(v.dataSync() as Float32Array));
      }
      const state = await resumed.optimizer.exportState();
      expect(state.step).toBe(12);
      for (const name of straight.parameters.keys()) {
        expect(bits(state.m.get(name)!)).toEqual(bits(expectedState.m.get(name)!));
        expect(bits(state.v.get(name)!)).toEqual(bits(expectedState.v.get(name)!));
      }
      // The final checkpoint holds the final parameters; a finished run does nothing more.
      const final = (await readSftCheckpoint(dir))!;
      expect(final.step).toBe(12);
      for (const [name, v] of straight.parameters) {
        expect(bits(final.parameters.get(name)!.data)).toEqual(bits(v.dataSync() as Float32Array));
      }
      expect(await resumed.train()).toMatchObject({ step: 12, loss: undefined, resumedFrom: 12 });
      resumed.dispose();
    }
  });

  it('writes the checkpoint atomically as one safetensors file', async () => {
    const dir = join(root, 'layout');
    const m = model(6);
    const trainer = new SftTrainer(
      options(m, { steps: 2, checkpoint: directoryCheckpointStore(dir) }),
    );
    await trainer.train();
    await trainer.saveCheckpoint();
    trainer.dispose();
    expect(directoryCheckpointStore(dir).path).toBe(join(dir, SFT_CHECKPOINT_FILE));
    expect((await stat(join(dir, SFT_CHECKPOINT_FILE))).isFile()).toBe(true);
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(dir)).toEqual([SFT_CHECKPOINT_FILE]); // no temporary file left behind
    const checkpoint = (await readSftCheckpoint(dir))!;
    expect(checkpoint.step).toBe(2);
    expect(checkpoint.optimizer.step).toBe(2);
    expect(checkpoint.rng).toEqual(new Rng(7).state());
    expect([...checkpoint.parameters.keys()].sort()).toEqual([...m.parameters.keys()].sort());
    const now = snapshot(m);
    for (const [name, p] of checkpoint.parameters) {
      expect(p.shape).toEqual(m.parameters.get(name)!.shape);
      expect(bits(p.data)).toEqual(bits(now.get(name)!));
    }
  });

  it('refuses a checkpoint that does not fit the run', async () => {
    const dir = join(root, 'mismatch');
    const trainer = new SftTrainer(
      options(model(7), { steps: 3, checkpoint: directoryCheckpointStore(dir) }),
    );
    await trainer.train();
    trainer.dispose();

    const untouched = model(7);
    const initial = snapshot(untouched);
    const otherSeed = new SftTrainer(
      options(untouched, { seed: 8, checkpoint: directoryCheckpointStore(dir) }),
    );
    await expectLetheRejection(otherSeed.train(), 'E_CHECKPOINT', 'seed');
    expect(otherSeed.step).toBe(0);
    for (const [name, data] of snapshot(untouched))
      expect(bits(data)).toEqual(bits(initial.get(name)!));
    otherSeed.dispose();

    const shorter = new SftTrainer(
      options(model(7), {
        steps: 2,
        schedule: constantSchedule(0.01),
        checkpoint: directoryCheckpointStore(dir),
      }),
    );
    await expectLetheRejection(shorter.train(), 'E_CHECKPOINT', 'steps');
    shorter.dispose();

    const wide = bigramModel(7, VOCAB, DIM + 1);
    models.push(wide);
    const wrongShape = new SftTrainer(options(wide, { checkpoint: directoryCheckpointStore(dir) }));
    await expectLetheRejection(wrongShape.train(), 'E_CHECKPOINT', 'embed.weight');
    wrongShape.dispose();

    const extra = model(7);
    const frozen = tf.variable(tf.zeros([2]), true);
    const withExtra = { parameters: new Map([...extra.parameters, ['extra.weight', frozen]]) };
    const missing = new SftTrainer({
      ...options(extra),
      model: withExtra,
      checkpoint: directoryCheckpointStore(dir),
    });
    await expectLetheRejection(missing.train(), 'E_CHECKPOINT', 'extra.weight');
    missing.dispose();
    frozen.dispose();

    const versionDir = join(root, 'version');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(versionDir);
    await writeSafetensorsFile(
      join(versionDir, SFT_CHECKPOINT_FILE),
      {},
      {
        format: 'lethe-sft-checkpoint',
        version: '99',
      },
    );
    const future = new SftTrainer(
      options(model(7), { checkpoint: directoryCheckpointStore(versionDir) }),
    );
    await expectLetheRejection(future.train(), 'E_FORMAT', 'version');
    // resume: false ignores (and later overwrites) whatever is there.
    const fresh = new SftTrainer(
      options(model(7), {
        steps: 1,
        checkpoint: directoryCheckpointStore(versionDir),
        resume: false,
      }),
    );
    expect(await fresh.train()).toMatchObject({ step: 1, resumedFrom: 0 });
    expect((await readSftCheckpoint(versionDir))!.step).toBe(1);
    future.dispose();
    fresh.dispose();
  });

  it('stops with E_STATE on a non-finite loss without touching the parameters', async () => {
    const m = model(8);
    const before = snapshot(m);
    const finite = bigramLoss(m);
    const trainer = new SftTrainer({
      ...options(m),
      loss: (batch) => tf.tidy(() => tf.mul(finite(batch), Number.POSITIVE_INFINITY)),
    });
    const tensors = tf.memory().numTensors;
    await expectLetheRejection(trainer.train(), 'E_STATE', 'loss');
    expect(tf.memory().numTensors).toBe(tensors);
    expect(trainer.step).toBe(0);
    for (const [name, data] of snapshot(m)) expect(bits(data)).toEqual(bits(before.get(name)!));
    trainer.dispose();
  });

  it('trains only trainable variables', async () => {
    const m = model(9);
    const head = m.parameters.get('head.weight')!;
    head.trainable = false;
    const frozen = Float32Array.from(head.dataSync());
    const trainer = new SftTrainer(options(m, { steps: 3 }));
    await trainer.train();
    trainer.dispose();
    head.trainable = true;
    expect(bits(head.dataSync() as Float32Array)).toEqual(bits(frozen));
  });

  it('rejects bad options with E_ARG naming the field', () => {
    const m = model(10);
    const cases: [Partial<SftTrainerOptions<NextTokenBatch>>, string][] = [
      [{ steps: 0 }, 'steps'],
      [{ steps: 2.5 }, 'steps'],
      [{ seed: -1 }, 'seed'],
      [{ clipNorm: 0 }, 'clipNorm'],
      [{ clipNorm: Number.NaN }, 'clipNorm'],
      [{ checkpointEvery: 5 }, 'checkpointEvery'],
      [{ checkpointEvery: 0, checkpoint: directoryCheckpointStore(root) }, 'checkpointEvery'],
      [{ steps: 13 }, 'step'], // longer than the schedule
      [{ schedule: () => Number.NaN }, 'schedule'],
      [{ optimizer: { beta1: 1 } }, 'beta1'],
      [{ optimizer: { weightDecay: -1 } }, 'weightDecay'],
    ];
    const before = tf.memory().numTensors;
    for (const [overrides, field] of cases) {
      expectLetheError(() => new SftTrainer(options(m, overrides)), 'E_ARG', field);
    }
    expect(tf.memory().numTensors).toBe(before);
    for (const v of m.parameters.values()) v.trainable = false;
    expectLetheError(() => new SftTrainer(options(m)), 'E_ARG', 'model');
    for (const v of m.parameters.values()) v.trainable = true;
  });

  it('refuses concurrent train() calls and saving without a directory', async () => {
    const trainer = new SftTrainer(options(model(11), { steps: 2 }));
    const running = trainer.train();
    await expectLetheRejection(trainer.train(), 'E_STATE', 'train');
    await running;
    await expectLetheRejection(trainer.saveCheckpoint(), 'E_STATE', 'checkpoint');
    await expectLetheRejection(trainer.restoreCheckpoint(), 'E_STATE', 'checkpoint');
    trainer.dispose();
  });
});
