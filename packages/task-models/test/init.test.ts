import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection, shellWords } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTaskModel } from '../src/load-task-model';
import { parseTaskModelManifest, TASK_MODEL_FILE } from '../src/manifest';
import { parsePretrainFlags } from '../src/pretrain-flags';
import { type PretrainOptions, resolvePretrainSettings } from '../src/pretrain-settings';
import { pretrainTaskModel } from '../src/pretrain-task-model';
import { MICRO } from './helpers';

let dir: string;
/** A micro arithmetic task model (2 updates from a random start): what the runs start from. */
let base: string;

/** A fine-tuning run of `base`'s architecture on another option of its task. */
const FINE_TUNE = {
  task: 'arithmetic',
  taskOptions: { steps: 1 },
  modelSize: MICRO,
  steps: 6,
  batchSize: 3,
  lr: 0.01,
  evalExamples: 1,
} as const satisfies Partial<PretrainOptions>;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-init-'));
  base = join(dir, 'base');
  const run = await pretrainTaskModel({
    task: 'arithmetic',
    taskOptions: { steps: 2 },
    modelSize: MICRO,
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

/** A run of `options` in `dir/<out>` stopped before its first update: the weights it starts from. */
function startOf(options: Omit<PretrainOptions, 'out' | 'signal'>, out: string) {
  const stopped = new AbortController();
  stopped.abort();
  return pretrainTaskModel({ ...options, out: join(dir, out), signal: stopped.signal });
}

describe('pretrain --init', () => {
  it('starts from exactly the weights of the given task model', async () => {
    const loaded = await loadTaskModel(base);
    const run = await startOf({ ...FINE_TUNE, init: base }, 'step-0');
    expect([run.stopped, run.step]).toEqual([true, 0]);
    expect(run.model.toTensors()).toEqual(loaded.model.toTensors());
    const random = await startOf(FINE_TUNE, 'step-0');
    expect(random.model.toTensors()).not.toEqual(loaded.model.toTensors());
    for (const model of [loaded.model, run.model, random.model]) model.dispose();
  });

  it('records the start and a command that recreates the run', async () => {
    const baseManifest = (await loadTaskModel(base)).manifest;
    const first = join(dir, 'first');
    const run = await pretrainTaskModel({ ...FINE_TUNE, init: base, out: first });
    run.model.dispose();
    const manifest = run.manifest!;
    expect(manifest.training.init).toEqual({ dir: base, command: baseManifest.command });
    expect(manifest.command).toContain(`--intermediate 32 --init ${base} --steps 6`);
    const parsed = parsePretrainFlags(shellWords(manifest.command).slice(2));
    expect(resolvePretrainSettings(parsed.options).settings).toEqual(run.settings);
    expect((await loadTaskModel(first)).manifest).toEqual(manifest);

    // A second stage records the whole chain of starts.
    const second = await pretrainTaskModel({ ...FINE_TUNE, init: first, out: join(dir, 'second') });
    second.model.dispose();
    expect(second.manifest!.training.init).toEqual({
      dir: first,
      command: manifest.command,
      init: { dir: base, command: baseManifest.command },
    });

    const broken = { ...manifest, training: { ...manifest.training, init: { dir: base } } };
    const error = expectLetheError(() => parseTaskModelManifest(broken, 'm.json'));
    expect([error.code, error.argument]).toEqual(['E_FORMAT', 'm.json']);
    expect(error.message).toMatch(/field "training\.init\.command" must be a non-empty string/);
  });

  it('deepens a shallower task model: its layers below, identity layers on top, recorded', async () => {
    const loaded = await loadTaskModel(base);
    const deeper = { ...FINE_TUNE, modelSize: { ...MICRO, layers: 4 } };
    const start = await startOf({ ...deeper, init: base }, 'deeper-0');
    expect(start.model.config.num_hidden_layers).toBe(4);
    const ids = tf.tensor2d([[1, 4, 2, 7, 3]], [1, 5], 'int32');
    const logits = [loaded.model, start.model].map((m) => m.forward(ids).logits);
    expect(logits[1]!.dataSync()).toEqual(logits[0]!.dataSync());
    tf.dispose([ids, ...logits]);
    for (const model of [loaded.model, start.model]) model.dispose();

    const run = await pretrainTaskModel({ ...deeper, init: base, out: join(dir, 'deeper') });
    run.model.dispose();
    const manifest = run.manifest!;
    expect(manifest.training.init).toEqual({
      dir: base,
      command: (await loadTaskModel(base)).manifest.command,
      addedLayers: 2,
    });
    expect((await loadTaskModel(join(dir, 'deeper'))).manifest).toEqual(manifest);
    const broken = {
      ...manifest,
      training: { ...manifest.training, init: { ...manifest.training.init!, addedLayers: 0 } },
    };
    const error = expectLetheError(() => parseTaskModelManifest(broken, 'm.json'));
    expect(error.message).toMatch(/field "training\.init\.addedLayers" must be an integer ≥ 1/);
  });

  it('widens and deepens a narrower task model, its function kept, recorded', async () => {
    const loaded = await loadTaskModel(base);
    const wider = {
      ...FINE_TUNE,
      modelSize: { hidden: 24, layers: 3, heads: 3, kvHeads: 1, intermediate: 48 },
    };
    const start = await startOf({ ...wider, init: base }, 'wider-0');
    expect(start.model.config).toMatchObject({
      hidden_size: 24,
      num_hidden_layers: 3,
      num_attention_heads: 3,
      head_dim: 8,
    });
    const ids = tf.tensor2d([[1, 4, 2, 7, 3]], [1, 5], 'int32');
    const [before, after] = [loaded.model, start.model].map(
      (m) => tf.tidy(() => m.forward(ids).logits.dataSync()) as Float32Array,
    );
    const top = Math.max(...before!.map(Math.abs));
    before!.forEach((value, i) => expect(Math.abs(value - after![i]!)).toBeLessThan(1e-5 * top));
    ids.dispose();
    for (const model of [loaded.model, start.model]) model.dispose();

    const run = await pretrainTaskModel({ ...wider, init: base, out: join(dir, 'wider') });
    run.model.dispose();
    const manifest = run.manifest!;
    expect(manifest.training.init).toEqual({
      dir: base,
      command: loaded.manifest.command,
      addedLayers: 1,
      widenedFrom: { hidden: 16, heads: 2, kvHeads: 1, intermediate: 32 },
    });
    expect((await loadTaskModel(join(dir, 'wider'))).manifest).toEqual(manifest);
    const broken = {
      ...manifest,
      training: {
        ...manifest.training,
        init: { ...manifest.training.init!, widenedFrom: { hidden: 16, heads: 2 } },
      },
    };
    const error = expectLetheError(() => parseTaskModelManifest(broken, 'm.json'));
    expect(error.message).toMatch(
      /field "training\.init\.widenedFrom\.kvHeads" must be an integer/,
    );
  });

  it('resumes bit-identically, and refuses the state of a run with another start', async () => {
    const straight = await pretrainTaskModel({
      ...FINE_TUNE,
      init: base,
      out: join(dir, 'straight'),
    });
    straight.model.dispose();

    const state = join(dir, 'resumed.state');
    const out = join(dir, 'resumed');
    const controller = new AbortController();
    const first = await pretrainTaskModel({
      ...FINE_TUNE,
      init: base,
      out,
      checkpointDir: state,
      checkpointEvery: 2,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.step === 3) controller.abort();
      },
    });
    first.model.dispose();
    expect([first.stopped, first.step]).toEqual([true, 3]);

    const copy = join(dir, 'base-copy');
    await cp(base, copy, { recursive: true });
    for (const [init, recorded] of [
      [copy, JSON.stringify(base)],
      [undefined, JSON.stringify(base)],
    ] as const) {
      const error = await expectLetheRejection(
        pretrainTaskModel({ ...FINE_TUNE, init, out, checkpointDir: state }),
      );
      expect([error.code, error.argument]).toEqual(['E_ARG', state]);
      expect(error.message).toContain(
        `setting "init" was ${recorded}, now ${init === undefined ? 'null' : JSON.stringify(init)}`,
      );
    }

    const steps: number[] = [];
    const second = await pretrainTaskModel({
      ...FINE_TUNE,
      init: base,
      out,
      checkpointDir: state,
      checkpointEvery: 2,
      onProgress: (p) => steps.push(p.step),
    });
    second.model.dispose();
    expect(steps).toEqual([4, 5, 6]);
    expect(await readFile(join(out, 'model.safetensors'))).toEqual(
      await readFile(join(dir, 'straight', 'model.safetensors')),
    );
    // Everything recorded of the training but its wall-clock time is the straight run's.
    const { trainingSeconds, ...training } = second.manifest!.training;
    const { trainingSeconds: straightSeconds, ...straightTraining } = straight.manifest!.training;
    expect(training).toEqual(straightTraining);
    expect([trainingSeconds, straightSeconds].every((s) => s !== undefined && s >= 0)).toBe(true);
  });
});

describe('pretrain --init refuses a start that does not fit the run', () => {
  const refusal = (options: Partial<PretrainOptions>) =>
    expectLetheRejection(
      pretrainTaskModel({ ...FINE_TUNE, init: base, out: join(dir, 'x'), ...options }),
    );

  it('another architecture', async () => {
    for (const [modelSize, message] of [
      [{ ...MICRO, hidden: 8 }, /config\.json has hidden_size 16, the run 8 \(modelSize\.hidden\)/],
      [
        { ...MICRO, hidden: 32 },
        /config\.json has head_dim 8, the run 16 \(modelSize\.hidden \/ modelSize\.heads\)/,
      ],
      [{ ...MICRO, layers: 1 }, /has num_hidden_layers 2, the run 1 \(modelSize\.layers\)/],
      [{ ...MICRO, intermediate: 16 }, /has intermediate_size 32, the run 16/],
    ] as const) {
      const error = await refusal({ modelSize });
      expect([error.code, error.argument]).toEqual(['E_ARG', 'init']);
      expect(error.message).toMatch(message);
      expect(error.message).toMatch(
        /fine-tuning needs the same architecture \(or fewer layers, which the run adds on top, or narrower widths, which it widens\)/,
      );
    }
  });

  it('a widening that would regroup its heads', async () => {
    const error = await refusal({ modelSize: { ...MICRO, kvHeads: 2 } });
    expect([error.code, error.argument]).toEqual(['E_ARG', 'init']);
    expect(error.message).toMatch(
      /config\.json cannot be widened to the run's widths: heads: heads \/ kvHeads must be at least the model's group size 2, got 2 \/ 2/,
    );
  });

  it("another task's tokenizer", async () => {
    const error = await refusal({ task: 'retrieval', taskOptions: { contextChars: 96 } });
    expect([error.code, error.argument]).toEqual(['E_ARG', 'init']);
    expect(error.message).toMatch(
      /tokenizer\.json is .*, not the run's tokenizer .*: the model was trained for another task/,
    );
  });

  it('a directory that is not a task model, or the output directory', async () => {
    const missing = await refusal({ init: join(dir, 'nowhere') });
    expect([missing.code, missing.argument]).toEqual(['E_CHECKPOINT', 'init']);
    expect(missing.message).toMatch(/not a usable task model: .*nowhere: cannot be read/);

    const plain = join(dir, 'plain');
    await mkdir(plain, { recursive: true });
    await writeFile(join(plain, 'notes.txt'), 'x');
    const notModel = await refusal({ init: plain });
    expect([notModel.code, notModel.argument]).toEqual(['E_CHECKPOINT', 'init']);
    expect(notModel.message).toContain(`${join(plain, TASK_MODEL_FILE)}: is missing`);

    const same = expectLetheError(() =>
      resolvePretrainSettings({ ...FINE_TUNE, init: base, out: base }),
    );
    expect([same.code, same.argument]).toEqual(['E_ARG', 'init']);
    expect(same.message).toMatch(/must differ from out/);
  });
});
