import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DecoderModel } from '@lethe/model';
import { readModelDirectory, writeModelDirectory } from '@lethe/model/node';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NGC_RUN_FILE } from '../src/run-file';
import { trainRun } from '../src/train-run';
import { DEFAULT_TRAIN_SETTINGS, type TrainSettings } from '../src/train-settings';

const MODEL = fileURLToPath(new URL('../../../models/countdown', import.meta.url));
let root: string;
/** A finished run of MODEL whose weights differ from MODEL's: the embedding halved. */
let earlier: string;
let earlierWeights: Record<string, { data: Float32Array }>;

const SETTINGS: TrainSettings = {
  ...DEFAULT_TRAIN_SETTINGS,
  model: MODEL,
  variant: 'ngc',
  steps: 1,
  promptsPerStep: 1,
  groupSize: 2,
  retention: [0.5],
  maxNewTokens: 24,
  lr: 0,
};

beforeAll(async () => {
  await initBackend('wasm');
  root = await mkdtemp(join(tmpdir(), 'lethe-ngc-init-'));
  earlier = join(root, 'earlier');
  const base = await loadTaskModel(MODEL);
  const tensors = base.model.toTensors();
  const embedding = tensors['model.embed_tokens.weight']!;
  tensors['model.embed_tokens.weight'] = {
    shape: embedding.shape,
    data: embedding.data.map((x) => x / 2),
  };
  const model = DecoderModel.fromTensors(base.model.config, tensors);
  await writeModelDirectory(earlier, {
    model,
    tokenizer: base.tokenizer,
    json: { [NGC_RUN_FILE]: { baseModel: base.manifest, settings: { interoception: false } } },
  });
  earlierWeights = model.toTensors();
  model.dispose();
  base.model.dispose();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('trainRun with init', () => {
  it("starts from the earlier run's weights and records it", async () => {
    const out = join(root, 'continued');
    const settings = { ...SETTINGS, init: earlier };
    await trainRun(settings, { out, command: 'test' });
    // lr 0: the saved weights are the ones the run started from.
    const { model } = await readModelDirectory(out);
    const saved = model.toTensors();
    model.dispose();
    for (const [name, tensor] of Object.entries(earlierWeights)) {
      expect(saved[name]!.data, name).toEqual(tensor.data);
    }
    const run = JSON.parse(await readFile(join(out, NGC_RUN_FILE), 'utf8'));
    expect(run.settings.init).toBe(earlier);
  }, 60_000);

  it('refuses a directory that is not a run, another base model or another tag setting', async () => {
    const before = tf.memory().numTensors;
    const out = join(root, 'refused');
    await expect(trainRun({ ...SETTINGS, init: MODEL }, { out, command: 'test' })).rejects.toThrow(
      expect.objectContaining({ code: 'E_ARG', argument: 'init' }),
    );
    await expect(
      trainRun({ ...SETTINGS, init: earlier, interoception: true }, { out, command: 'test' }),
    ).rejects.toThrow(/without interoception/);
    const other = join(root, 'other-base');
    const base = await loadTaskModel(MODEL);
    await writeModelDirectory(other, {
      model: base.model,
      tokenizer: base.tokenizer,
      json: {
        [NGC_RUN_FILE]: {
          baseModel: { ...base.manifest, command: 'another model' },
          settings: { interoception: false },
        },
      },
    });
    base.model.dispose();
    await expect(trainRun({ ...SETTINGS, init: other }, { out, command: 'test' })).rejects.toThrow(
      /another task model/,
    );
    expect(tf.memory().numTensors).toBe(before);
  }, 60_000);
});
