import {
  describePolicyOptions,
  type PolicyContext,
  PolicyRegistry,
  type ScorerPolicy,
} from '@lethe/kv-cache';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeGsaParameters } from '../../src/gate/gate-safetensors';
import { GsaGate } from '../../src/gate/gsa-gate';
import { GsaPolicy } from '../../src/policy/gsa-policy';
import { type GsaLoaded, gsaProvider } from '../../src/policy/gsa-provider';
import { memoryDirectory, randomGate, SHAPE } from '../fixtures';

beforeAll(async () => {
  await initBackend('cpu');
});

const CONTEXT: PolicyContext = {
  model: { ...SHAPE, queryHeads: 4, headDim: 4 },
  sequences: 2,
};

const OPTIONS = { sinks: 4, window: 32 };

/** A policy directory holding `randomGate(granularity)`. */
function directory(granularity: 'head' | 'layer' | 'scalar' = 'head') {
  const { parameters, tensors } = encodeGsaParameters(randomGate(granularity));
  return memoryDirectory(parameters, { [parameters.tensors]: tensors });
}

async function load(granularity: 'head' | 'layer' | 'scalar' = 'head'): Promise<GsaLoaded> {
  return gsaProvider.learned!.load(directory(granularity));
}

describe('gsaProvider', () => {
  it('describes itself and defaults to the paper’s sinks 4 and window 32', () => {
    expect(gsaProvider.name).toBe('gsa');
    expect(gsaProvider.summary).not.toContain('\n');
    const options = describePolicyOptions(gsaProvider.options);
    expect(options.map((o) => [o.name, o.default])).toEqual([
      ['sinks', 4],
      ['window', 32],
    ]);
    expect(options.every((o) => (o.description ?? '').length > 0)).toBe(true);
  });

  it('loads the gate, builds capacity and rate policies, and release frees the weights', async () => {
    const before = tf.memory().numTensors;
    const loaded = await load();
    expect(loaded.gate).toBeInstanceOf(GsaGate);
    expect(loaded.parameters).toEqual(randomGate('head'));
    expect(tf.memory().numTensors).toBe(before + 8);

    const { eviction } = gsaProvider.build({
      budget: { capacity: 128 },
      options: OPTIONS,
      context: CONTEXT,
      parameters: loaded,
    });
    expect(eviction).toBeInstanceOf(GsaPolicy);
    const capacity = eviction as GsaPolicy & ScorerPolicy;
    expect(capacity.gate).toBe(loaded.gate);
    expect(capacity.anchors).toEqual({ sinks: 4, window: 32 });
    expect(capacity.budget).toEqual({ keepCount: 127 });
    expect(capacity.trigger).toEqual({ whenLiveExceeds: 127, slack: 0 });

    const rate = gsaProvider.build({
      budget: { keepRatio: 0.25, every: 16 },
      options: { sinks: 0, window: 2 },
      context: CONTEXT,
      parameters: loaded,
    }).eviction as GsaPolicy;
    expect(rate.budget).toEqual({ keepRatio: 0.25 });
    expect(rate.trigger).toEqual({ every: 16 });
    expect(rate.anchors).toEqual({ sinks: 0, window: 2 });
    expect(rate.gate).toBe(loaded.gate);

    // Building uploads nothing: every policy shares the loaded gate.
    expect(tf.memory().numTensors).toBe(before + 8);
    gsaProvider.learned!.release!(loaded);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('loads every granularity', async () => {
    for (const granularity of ['head', 'layer', 'scalar'] as const) {
      const loaded = await load(granularity);
      expect(loaded.gate.granularity).toBe(granularity);
      gsaProvider.learned!.release!(loaded);
    }
  });

  it('refuses a model of another shape, naming the parameter and both numbers', async () => {
    const loaded = await load();
    const build = (model: Partial<PolicyContext['model']>) => () =>
      gsaProvider.build({
        budget: { capacity: 64 },
        options: OPTIONS,
        context: { ...CONTEXT, model: { ...CONTEXT.model, ...model } },
        parameters: loaded,
      });
    for (const [field, value] of [
      ['hiddenSize', 16],
      ['layers', 3],
      ['kvHeads', 1],
    ] as const) {
      const error = expectLetheError(build({ [field]: value }), 'E_ARG', `parameters.${field}`);
      expect(error.message).toContain(`${field} ${SHAPE[field]}`);
      expect(error.message).toContain(`${field} ${value}`);
    }
    gsaProvider.learned!.release!(loaded);
  });

  it('refuses anchors above the capacity with E_BUDGET, in the user’s numbers', async () => {
    const loaded = await load();
    const error = expectLetheError(
      () =>
        gsaProvider.build({
          budget: { capacity: 36 },
          options: OPTIONS,
          context: CONTEXT,
          parameters: loaded,
        }),
      'E_BUDGET',
      'anchors',
    );
    expect(error.message).toContain('sinks 4 + window 32 = 36');
    expect(error.message).toContain('budget.capacity 36 leaves 35');
    // One more slot fits: the round keeps just the anchors.
    const fits = gsaProvider.build({
      budget: { capacity: 37 },
      options: OPTIONS,
      context: CONTEXT,
      parameters: loaded,
    });
    expect((fits.eviction as GsaPolicy).budget).toEqual({ keepCount: 36 });
    gsaProvider.learned!.release!(loaded);
  });

  it('refuses a manifest whose parameters are not a GSA gate’s', async () => {
    const { parameters, tensors } = encodeGsaParameters(randomGate('head'));
    const files = { [parameters.tensors]: tensors };
    const location = 'memory:gsa/policy.json';
    const cases: [Record<string, unknown> | undefined, string][] = [
      [undefined, 'parameters'],
      [{ ...parameters, granularity: 'token' }, 'granularity'],
      [{ ...parameters, layers: 0 }, 'layers'],
      [{ ...parameters, hiddenSize: 2.5 }, 'hiddenSize'],
      [{ ...parameters, extra: 1 }, 'extra'],
      [(({ tensors: _, ...rest }) => rest)(parameters), 'tensors'],
    ];
    for (const [manifest, fragment] of cases) {
      const error = await expectLetheRejection(
        gsaProvider.learned!.load(memoryDirectory(manifest, files)),
        'E_FORMAT',
        location,
      );
      expect(error.message).toContain(fragment);
    }
  });

  it('refuses a tensors file that does not match the manifest', async () => {
    const { parameters, tensors } = encodeGsaParameters(randomGate('head'));
    const files = { [parameters.tensors]: tensors };
    await expectLetheRejection(
      gsaProvider.learned!.load(memoryDirectory({ ...parameters, kvHeads: 3 }, files)),
      'E_FORMAT',
      'memory:gsa/gates.safetensors',
    );
  });

  it('runs through a registry: prepare, build, release once', async () => {
    const before = tf.memory().numTensors;
    const registry = new PolicyRegistry([gsaProvider]);
    const prepared = await registry.prepare('gsa', {
      directory: directory('layer'),
      options: { window: 8 },
    });
    expect(prepared.options).toEqual({ sinks: 4, window: 8 });
    const { eviction } = prepared.build({ capacity: 32 }, CONTEXT);
    expect(eviction?.gate).toBeInstanceOf(GsaGate);
    expect(tf.memory().numTensors).toBe(before + 8);
    prepared.release();
    prepared.release();
    expect(tf.memory().numTensors).toBe(before);
    await expectLetheRejection(registry.prepare('gsa'), 'E_ARG', 'policyDir');
  });
});
