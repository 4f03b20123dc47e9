import { parseSafetensors, type SafetensorsTensor, serializeSafetensors } from '@lethe/core';
import {
  type PolicyContext,
  type PolicyDirectory,
  type PolicyManifest,
  PolicyRegistry,
} from '@lethe/kv-cache';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  ActionSet,
  decodeSolPolicy,
  encodeSolPolicy,
  presetLevels,
  SOL_TENSORS_FILE,
  SolPolicy,
  solProvider,
} from '../src/index';
import { randomParameters, SMALL } from './fixtures';

const actions = new ActionSet(presetLevels('2L'));
const baseModel = { hiddenSize: SMALL.inputSize, vocabSize: 40 };
const targets = { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 };
const context: PolicyContext = {
  model: { layers: 2, kvHeads: 1, queryHeads: 2, headDim: 4, hiddenSize: 8, vocabSize: 40 },
  sequences: 2,
};

/**
 * An in-memory SOL policy directory; `edit` changes the manifest's parameters, `tamper` the
 * tensors file's tensors.
 */
function directory(
  edit: (parameters: Record<string, unknown>) => Record<string, unknown> = (p) => p,
  options: Record<string, unknown> = { horizon: 4 },
  tamper?: (tensors: Record<string, SafetensorsTensor>) => Record<string, SafetensorsTensor>,
): PolicyDirectory {
  const encoded = encodeSolPolicy({ parameters: randomParameters(SMALL, 2), actions, baseModel });
  const manifest: PolicyManifest = {
    format: 'lethe-policy',
    version: 1,
    provider: 'sol',
    options,
    parameters: edit({ ...encoded.parameters }),
  };
  return {
    manifest,
    files: {
      location: 'memory:sol',
      readText: async () => '',
      readBytes: async (name) => {
        if (name !== SOL_TENSORS_FILE) throw new Error(`no file ${name}`);
        if (tamper === undefined) return encoded.tensors;
        return serializeSafetensors(
          tamper(parseSafetensors(encoded.tensors, { copy: true }).tensors),
        );
      },
    },
  };
}

const registry = new PolicyRegistry([solProvider]);

describe('the SOL policy directory', () => {
  it('round-trips the controller, its action set and base model', () => {
    const parameters = randomParameters(SMALL, 2);
    const encoded = encodeSolPolicy({ parameters, actions, baseModel });
    const back = decodeSolPolicy(
      JSON.parse(JSON.stringify(encoded.parameters)),
      encoded.tensors,
      'x',
    );
    expect(back.parameters.tensors).toEqual(parameters.tensors);
    expect(back.actions.levels).toEqual(actions.levels);
    expect(back.baseModel).toEqual(baseModel);
  });

  it('refuses an action set or base model that does not fit the controller', () => {
    const parameters = randomParameters(SMALL, 2);
    const threeLevels = new ActionSet(presetLevels('3L'));
    expectLetheError(
      () => encodeSolPolicy({ parameters, actions: threeLevels, baseModel }),
      'E_ARG',
      'trained.actions',
    );
    expectLetheError(
      () => encodeSolPolicy({ parameters, actions, baseModel: { ...baseModel, hiddenSize: 9 } }),
      'E_ARG',
      'trained.baseModel.hiddenSize',
    );
    expectLetheError(
      () => encodeSolPolicy({ parameters, actions, baseModel: { ...baseModel, vocabSize: 0 } }),
      'E_ARG',
      'trained.baseModel.vocabSize',
    );
    const encoded = encodeSolPolicy({ parameters, actions, baseModel });
    expectLetheError(() => decodeSolPolicy([], encoded.tensors, 'here'), 'E_FORMAT', 'here');
    expectLetheError(
      () => decodeSolPolicy({ ...encoded.parameters, actions: null }, encoded.tensors, 'here'),
      'E_FORMAT',
      'here',
    );
    expectLetheError(
      () =>
        decodeSolPolicy(
          { ...encoded.parameters, actions: { ...encoded.parameters.actions, activationBits: [] } },
          encoded.tensors,
          'here',
        ),
      'E_ARG',
      'levels.activationBits',
    );
  });
});

describe('solProvider', () => {
  it('names the tensors file, and the tensor, in every error about its tensors', async () => {
    const file = `memory:sol/${SOL_TENSORS_FILE}`;
    type Tensors = Record<string, SafetensorsTensor>;
    const cases: [(tensors: Tensors) => Tensors, string, string][] = [
      [({ 'final_norm.bias': _, ...rest }) => rest, 'E_CHECKPOINT', 'final_norm.bias'],
      [(t) => ({ ...t, 'extra.weight': t['final_norm.bias']! }), 'E_CHECKPOINT', 'extra.weight'],
      [
        (t) => ({
          ...t,
          'final_norm.bias': { dtype: 'F32', shape: [3], data: new Float32Array(3) },
        }),
        'E_CHECKPOINT',
        'final_norm.bias',
      ],
      [
        (t) =>
          ({
            ...t,
            'final_norm.bias': {
              dtype: 'F16',
              shape: t['final_norm.bias']!.shape,
              data: new Uint16Array(16),
            },
          }) as Tensors,
        'E_CHECKPOINT',
        'final_norm.bias',
      ],
      [
        (t) => {
          const data = (t['input.weight']!.data as Float32Array).slice();
          data[5] = Number.NaN;
          return { ...t, 'input.weight': { dtype: 'F32', shape: t['input.weight']!.shape, data } };
        },
        'E_ARG',
        'input.weight',
      ],
    ];
    for (const [tamper, code, tensor] of cases) {
      const error = await expectLetheRejection(
        registry.prepare('sol', { directory: directory(undefined, undefined, tamper) }),
        code,
        file,
      );
      expect(error.message).toContain(`tensor "${tensor}"`);
    }
  });

  it('builds a SolPolicy for compute targets, with the directory’s options under the user’s', async () => {
    const prepared = await registry.prepare('sol', {
      directory: directory(),
      options: { refresh: false },
    });
    expect(prepared.budgetForms).toEqual(['compute']);
    expect(prepared.options).toEqual({
      horizon: 4,
      sampling: 'greedy',
      refresh: false,
      alwaysDense: 6,
    });
    const { compute, eviction } = prepared.build({ targets }, context);
    expect(compute).toBeInstanceOf(SolPolicy);
    expect(eviction).toBeUndefined();
    expect((compute as SolPolicy).horizon).toBe(4);
    expect(compute!.refreshEvery).toBeUndefined();
  });

  it('refuses memory budgets, bad targets and a controller of another base model', async () => {
    const prepared = await registry.prepare('sol', { directory: directory() });
    expectLetheError(() => prepared.build({ capacity: 8 }, context), 'E_BUDGET', 'budget');
    expectLetheError(
      () => prepared.build({ targets: { ...targets, precision: 1.5 } }, context),
      'E_BUDGET',
      'budget.targets.precision',
    );
    const other = (model: Partial<PolicyContext['model']>) => ({
      ...context,
      model: { ...context.model, ...model },
    });
    expectLetheError(
      () => prepared.build({ targets }, other({ hiddenSize: 16 })),
      'E_ARG',
      'parameters.baseModel.hiddenSize',
    );
    expectLetheError(
      () => prepared.build({ targets }, other({ vocabSize: 41 })),
      'E_ARG',
      'parameters.baseModel.vocabSize',
    );
    expectLetheError(
      () => prepared.build({ targets }, other({ vocabSize: undefined })),
      'E_ARG',
      'context.model.vocabSize',
    );
  });

  it('refuses bad options and malformed directories with coded errors', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ horizon: 0 }, 'options.horizon'],
      [{ sampling: 'hot' }, 'options.sampling'],
      [{ sampling: { temperature: 0 } }, 'options.sampling.temperature'],
      [{ refresh: 'yes' }, 'options.refresh'],
      [{ alwaysDense: -1 }, 'options.alwaysDense'],
    ];
    for (const [options, argument] of bad) {
      await expectLetheRejection(
        registry.prepare('sol', { directory: directory(), options }),
        'E_ARG',
        argument,
      );
    }
    const tooLong = await registry.prepare('sol', {
      directory: directory(),
      options: { horizon: SMALL.maxHorizon + 1 },
    });
    expectLetheError(() => tooLong.build({ targets }, context), 'E_ARG', 'horizon');
    await expectLetheRejection(
      registry.prepare('sol', { directory: directory(({ tensors, ...rest }) => rest) }),
      'E_FORMAT',
      'memory:sol/policy.json',
    );
    await expectLetheRejection(
      registry.prepare('sol', {
        directory: directory((p) => ({ ...p, baseModel: { hiddenSize: 8, vocabSize: 1.5 } })),
      }),
      'E_ARG',
      'parameters.baseModel.vocabSize',
    );
    await expectLetheRejection(registry.prepare('sol'), 'E_ARG', 'policyDir');
  });
});
