import type { DecoderModel } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ActionSet,
  controllerConfig,
  encodeController,
  initControllerParameters,
  SolController,
  type SolControllerParameters,
} from '../../src/index';
import {
  counterfactualRollouts,
  type SolProgress,
  type SolRolloutFunction,
  type SolRolloutRequest,
  SolTrainer,
  type SolTrainerOptions,
} from '../../src/train/index';
import {
  documents,
  jointActions,
  LM_CONFIG,
  memoryStore,
  tinyController,
  tinyModel,
  tinyTrainerOptions,
} from './train-fixtures';

let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = tinyModel();
});
afterAll(() => model.dispose());

const actions = jointActions();
const docs = documents(5, 16);

function options(overrides: Partial<SolTrainerOptions> = {}): SolTrainerOptions {
  return tinyTrainerOptions(model, actions, overrides);
}

/** Trains a fresh trainer to its `updates` and returns its parameters. */
async function trained(
  overrides: Partial<SolTrainerOptions> = {},
): Promise<SolControllerParameters> {
  const trainer = new SolTrainer(options(overrides));
  await trainer.train();
  const parameters = trainer.exportParameters();
  trainer.dispose();
  return parameters;
}

function sameTensors(a: SolControllerParameters, b: SolControllerParameters): boolean {
  return Object.entries(a.tensors).every(([name, values]) => {
    const other = b.tensors[name as keyof typeof b.tensors];
    return Buffer.from(values.buffer, values.byteOffset, values.byteLength).equals(
      Buffer.from(other.buffer, other.byteOffset, other.byteLength),
    );
  });
}

describe('SolTrainer options', () => {
  it('refuses bad options with coded errors naming them, leaving no tensor behind', () => {
    const before = tf.memory().numTensors;
    const cases: [Partial<SolTrainerOptions>, string, string][] = [
      [{ groupSize: 1 }, 'E_ARG', 'groupSize'],
      [{ horizon: 9 }, 'E_ARG', 'horizon'],
      [{ horizon: 0 }, 'E_ARG', 'horizon'],
      [{ prefix: 0 }, 'E_ARG', 'prefix'],
      [{ prefix: { min: 0, max: 4 } }, 'E_ARG', 'prefix.min'],
      [{ prefix: { min: 4, max: 3 } }, 'E_ARG', 'prefix.max'],
      [{ prefix: { min: 1, max: 125 } }, 'E_ARG', 'prefix'],
      [{ prefix: 125 }, 'E_ARG', 'prefix'],
      [{ updates: 0 }, 'E_ARG', 'updates'],
      [{ batchSize: 1.5 }, 'E_ARG', 'batchSize'],
      [{ gamma: 0 }, 'E_ARG', 'gamma'],
      [{ gamma: 1.5 }, 'E_ARG', 'gamma'],
      [{ temperature: -1 }, 'E_ARG', 'temperature'],
      [
        { budgetRanges: { tokenKeep: [0.6, 0.2], mlpInputKeep: [0.4, 1], precision: [0.5, 1] } },
        'E_ARG',
        'budgetRanges.tokenKeep',
      ],
      [{ penaltyWeights: [1, 2] as never }, 'E_ARG', 'penaltyWeights'],
      [{ penaltyWeights: [1, 2, -1] }, 'E_ARG', 'penaltyWeights'],
      [{ tolerance: -0.1 }, 'E_ARG', 'tolerance'],
      [{ alwaysDense: -1 }, 'E_ARG', 'alwaysDense'],
      [{ clipRange: 0 }, 'E_ARG', 'clipRange'],
      [{ entropyCoefficient: -1 }, 'E_ARG', 'entropyCoefficient'],
      [{ lr: Number.NaN }, 'E_ARG', 'lr'],
      [{ maxGradNorm: 0 }, 'E_ARG', 'maxGradNorm'],
      [{ adam: { beta1: 1 } }, 'E_ARG', 'beta1'],
      [{ seed: -1 }, 'E_ARG', 'seed'],
      [{ checkpointEvery: 2 }, 'E_ARG', 'checkpointEvery'],
      [{ rollouts: 'queue' as never }, 'E_ARG', 'rollouts'],
      [{ documents: [] }, 'E_ARG', 'documents'],
      [{ documents: [docs[0]!, docs[1]!.subarray(0, 12)] }, 'E_ARG', 'documents[1]'],
      [{ documents: ['abc' as never] }, 'E_ARG', 'documents[0]'],
      [{ prefix: undefined }, 'E_ARG', 'documents[0]'],
      [{ documents: [{ tokens: docs[0]!, prefix: 0 }] }, 'E_ARG', 'documents[0].prefix'],
      [
        { documents: [{ tokens: docs[0]!, prefix: { min: 3, max: 2 } }] },
        'E_ARG',
        'documents[0].prefix.max',
      ],
      [
        { documents: [docs[0]!, { tokens: docs[1]!, prefix: { min: 1, max: 125 } }] },
        'E_ARG',
        'documents[1].prefix',
      ],
      [
        { documents: [{ tokens: docs[0]!.subarray(0, 14), prefix: { min: 2, max: 10 } }] },
        'E_ARG',
        'documents[0].tokens',
      ],
      [
        {
          actions: new ActionSet({ tokenKeep: [0.1, 1], mlpInputKeep: [1], activationBits: [16] }),
        },
        'E_ARG',
        'actions',
      ],
      [
        {
          controller: initControllerParameters(
            controllerConfig({ inputSize: 8, actions: actions.size, maxHorizon: 8 }),
          ),
        },
        'E_CHECKPOINT',
        'inputSize',
      ],
    ];
    for (const [overrides, code, argument] of cases) {
      expect(() => new SolTrainer(options(overrides)), argument).toThrow(
        expect.objectContaining({ code, argument }),
      );
    }
    expect(tf.memory().numTensors).toBe(before);
  });

  it('fills in App. B’s defaults', () => {
    const controller = initControllerParameters(
      controllerConfig({
        inputSize: LM_CONFIG.hidden_size,
        actions: actions.size,
        width: 8,
        heads: 2,
        maxHorizon: 16,
      }),
    );
    const trainer = new SolTrainer({
      model,
      actions,
      controller,
      documents: documents(1, 25),
      updates: 1,
      prefix: 8,
    });
    expect(trainer.settings).toEqual({
      prefix: 8,
      horizon: 16,
      batchSize: 8,
      groupSize: 16,
      gamma: 0.85,
      temperature: 1.3,
      budgetRanges: { tokenKeep: [0.1, 1], mlpInputKeep: [0.4, 1], precision: [0.3125, 1] },
      penaltyWeights: [100, 100, 200],
      tolerance: 0.02,
      alwaysDense: 6,
      clipRange: 0.2,
      entropyCoefficient: 0.05,
      lr: 1e-4,
      maxGradNorm: 2,
      adam: { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0.01 },
      seed: 0,
    });
    trainer.dispose();
  });
});

describe('SolTrainer', () => {
  it('trains the controller’s policy, never the LM nor the value head, and leaks no tensor', async () => {
    const lm = model.toTensors();
    const before = tf.memory().numTensors;
    const progress: SolProgress[] = [];
    const initial = tinyController(actions);
    const trainer = new SolTrainer(options({ onProgress: (p) => progress.push(p) }));
    const result = await trainer.train();
    expect(result).toMatchObject({ step: 3, stopped: false, resumedFrom: 0 });
    const after = trainer.exportParameters();
    trainer.dispose();
    expect(tf.memory().numTensors).toBe(before);

    for (const [name, tensor] of Object.entries(model.toTensors())) {
      expect(tensor.data, name).toEqual(lm[name]!.data);
    }
    expect(after.tensors['value_head.weight']).toEqual(initial.tensors['value_head.weight']);
    expect(after.tensors['value_head.bias']).toEqual(initial.tensors['value_head.bias']);
    expect(after.tensors['policy_head.weight']).not.toEqual(initial.tensors['policy_head.weight']);
    expect(after.tensors['input.weight']).not.toEqual(initial.tensors['input.weight']);
    // the exported controller saves
    expect(encodeController(after).tensors.length).toBeGreaterThan(0);

    expect(progress.map((p) => p.step)).toEqual([1, 2, 3]);
    for (const p of progress) {
      expect(p.totalUpdates).toBe(3);
      expect(p.reward).toBeLessThan(0);
      expect(p.penalty).toBeGreaterThanOrEqual(0);
      expect(p.realised).toHaveLength(3);
      expect(p.targets).toHaveLength(3);
      expect(p.entropy).toBeGreaterThan(0);
      expect(p.entropy).toBeLessThanOrEqual(Math.log(actions.size) + 1e-6);
      expect(Number.isFinite(p.loss)).toBe(true);
      expect(p.gradNorm).toBeGreaterThan(0);
    }
    expect(result.history).toEqual(
      progress.map(({ totalUpdates, elapsedSeconds, etaSeconds, ...m }) => m),
    );
  });

  it('gives the same controller for the same seed and another for another seed', async () => {
    const first = await trained();
    expect(sameTensors(await trained(), first)).toBe(true);
    expect(sameTensors(await trained({ seed: 2 }), first)).toBe(false);
  });

  it('draws each input’s prefix from a range, seeded: the same run repeats, a fixed prefix differs', async () => {
    const ranged = await trained({ prefix: { min: 1, max: 8 } });
    expect(sameTensors(await trained({ prefix: { min: 1, max: 8 } }), ranged)).toBe(true);
    expect(sameTensors(await trained({ prefix: { min: 8, max: 8 } }), await trained())).toBe(true);
    expect(sameTensors(ranged, await trained())).toBe(false);
  });

  it('lets a document carry its own prefix, which replaces the trainer’s', async () => {
    const own = docs.map((tokens) => ({ tokens, prefix: 8 }));
    expect(sameTensors(await trained({ documents: own, prefix: 3 }), await trained())).toBe(true);
    expect(sameTensors(await trained({ documents: own, prefix: undefined }), await trained())).toBe(
      true,
    );
    const ranged = docs.map((tokens) => ({ tokens, prefix: { min: 1, max: 8 } }));
    expect(
      sameTensors(
        await trained({ documents: ranged, prefix: 2 }),
        await trained({ prefix: { min: 1, max: 8 } }),
      ),
    ).toBe(true);
    // Mixed: plain documents keep the trainer's prefix (a short one fits only it).
    const mixed = [{ tokens: docs[0]!, prefix: { min: 5, max: 11 } }, docs[1]!.subarray(0, 8)];
    const trainer = new SolTrainer(options({ documents: mixed, prefix: 3, updates: 1 }));
    await trainer.train();
    expect(trainer.step).toBe(1);
    trainer.dispose();
  });

  it('takes documents from a function of (update, index) as well', async () => {
    const fromList = await trained({ documents: [docs[0]!] });
    expect(sameTensors(await trained({ documents: () => docs[0]! }), fromList)).toBe(true);
    const bad = new SolTrainer(options({ documents: () => docs[0]!.subarray(0, 5) }));
    await expect(bad.update()).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'documents(0, 0)',
    });
    expect(bad.step).toBe(0);
    bad.dispose();
    const badPrefix = new SolTrainer(
      options({ documents: () => ({ tokens: docs[0]!, prefix: 20 }) }),
    );
    await expect(badPrefix.update()).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'documents(0, 0).tokens',
    });
    badPrefix.dispose();
  });

  it('runs its schedules with a rollouts function given, and checks what it returns', async () => {
    const asked: SolRolloutRequest[] = [];
    const inThread: SolRolloutFunction = async (request) => {
      asked.push(request);
      const { controller, inputs, settings } = request;
      return counterfactualRollouts(
        model,
        new SolController(controller),
        actions,
        inputs,
        settings,
      );
    };
    expect(sameTensors(await trained({ rollouts: inThread }), await trained())).toBe(true);
    expect(asked.map((request) => request.settings.firstStream)).toEqual([0, 6, 12]);
    expect(asked.every((request) => request.inputs.length === 2)).toBe(true);

    const before = tf.memory().numTensors;
    const short: SolRolloutFunction = async (request) => (await inThread(request)).slice(1);
    const trainer = new SolTrainer(options({ rollouts: short }));
    await expect(trainer.update()).rejects.toMatchObject({ code: 'E_STATE', argument: 'rollouts' });
    expect(trainer.step).toBe(0);
    trainer.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('resumed from a checkpoint, ends bit-identical to an uninterrupted run', async () => {
    const uninterrupted = new SolTrainer(options({ updates: 4 }));
    await uninterrupted.train();

    const store = memoryStore();
    const stop = new AbortController();
    const interrupted = new SolTrainer(
      options({
        updates: 4,
        checkpoint: store,
        signal: stop.signal,
        onProgress: (p) => {
          if (p.step === 2) stop.abort();
        },
      }),
    );
    expect(await interrupted.train()).toMatchObject({ step: 2, stopped: true });
    interrupted.dispose();

    const resumed = new SolTrainer(options({ updates: 4, checkpoint: store, checkpointEvery: 1 }));
    const result = await resumed.train();
    expect(result).toMatchObject({ step: 4, resumedFrom: 2, stopped: false });
    expect(result.history.map((m) => m.step)).toEqual([3, 4]);
    expect(sameTensors(resumed.exportParameters(), uninterrupted.exportParameters())).toBe(true);
    // parameters, AdamW moments and step, update count: the whole state
    expect(await resumed.exportCheckpoint()).toEqual(await uninterrupted.exportCheckpoint());
    expect(store.bytes).toEqual(await uninterrupted.exportCheckpoint());
    resumed.dispose();
    uninterrupted.dispose();
  });

  it('refuses a checkpoint of another run or format, changing nothing', async () => {
    const trainer = new SolTrainer(options({ updates: 1 }));
    await trainer.train();
    const bytes = await trainer.exportCheckpoint();
    trainer.dispose();
    const other = new SolTrainer(options({ updates: 1, gamma: 0.9 }));
    const before = other.exportParameters();
    expect(() => other.importCheckpoint(bytes)).toThrow(
      expect.objectContaining({ code: 'E_CHECKPOINT', argument: 'checkpoint' }),
    );
    expect(() => other.importCheckpoint(new Uint8Array(16))).toThrow(
      expect.objectContaining({ code: 'E_FORMAT' }),
    );
    expect(sameTensors(other.exportParameters(), before)).toBe(true);
    expect(other.step).toBe(0);
    other.dispose();
  });

  it('learns to meet an easy budget: realised κ moves to a requested 0.1', async () => {
    const tokenOnly = new ActionSet({
      tokenKeep: [0.1, 1],
      mlpInputKeep: [1],
      activationBits: [16],
    });
    const progress: SolProgress[] = [];
    const trainer = new SolTrainer({
      model,
      actions: tokenOnly,
      controller: tinyController(tokenOnly, 9),
      documents: docs,
      updates: 30,
      prefix: 8,
      horizon: 4,
      batchSize: 2,
      groupSize: 8,
      budgetRanges: { tokenKeep: [0.1, 0.1], mlpInputKeep: [0.4, 1], precision: [0.3125, 1] },
      lr: 1e-2,
      seed: 4,
      onProgress: (p) => progress.push(p),
    });
    await trainer.train();
    trainer.dispose();
    const kappa = (from: number, to: number) =>
      progress.slice(from, to).reduce((sum, p) => sum + p.realised![0], 0) / (to - from);
    expect(progress[0]!.targets).toEqual([expect.closeTo(0.1, 9), 1, 1]);
    const start = kappa(0, 3);
    const end = kappa(27, 30);
    expect(start).toBeGreaterThan(0.4);
    expect(end).toBeLessThan(0.25);
    expect(progress.slice(27).every((p) => p.penalty < progress[0]!.penalty)).toBe(true);
  });
});
