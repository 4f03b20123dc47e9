import { type PolicyDirectory, type PolicyManifest, PolicyRegistry } from '@lethe/kv-cache';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { NgcPolicy, ngcProvider } from '../src/index';

const CONTEXT = {
  model: { layers: 2, kvHeads: 2, queryHeads: 4, headDim: 8, hiddenSize: 32 },
  sequences: 1,
};

function directory(manifest: Partial<PolicyManifest>): PolicyDirectory {
  return {
    files: {
      location: 'mem',
      readText: async () => '',
      readBytes: async () => new Uint8Array(),
    },
    manifest: {
      format: 'lethe-policy',
      version: 1,
      provider: 'ngc',
      options: {},
      ...manifest,
    } as PolicyManifest,
  };
}

describe('ngcProvider', () => {
  const registry = new PolicyRegistry([ngcProvider]);

  it('builds a capacity-scheduled NgcPolicy with the trained options under the user’s', async () => {
    const prepared = await registry.prepare('ngc', {
      options: { mode: 'greedy' },
      directory: directory({
        model: '.',
        options: { blockSize: 2, window: 2, logits: { kind: 'log', temperature: 0.5 } },
      }),
    });
    expect(prepared.model).toBe('.');
    const policy = prepared.build({ capacity: 9 }, CONTEXT).eviction as NgcPolicy;
    expect(policy).toBeInstanceOf(NgcPolicy);
    // The budget is a ceiling: rounds leave 8 entries, so the next token makes 9.
    expect(policy.schedule).toEqual({ capacity: 8, slack: 0 });
    expect([policy.blockSize, policy.window, policy.logits]).toEqual([
      2,
      2,
      { kind: 'log', temperature: 0.5 },
    ]);
  });

  it('is learned: refuses to run without a directory, or with one that names no model', async () => {
    await expectLetheRejection(registry.prepare('ngc'), 'E_ARG', 'policyDir');
    await expectLetheRejection(
      registry.prepare('ngc', { directory: directory({}) }),
      'E_FORMAT',
      'mem/policy.json',
    );
  });

  it('validates its options and refuses a capacity below one block', async () => {
    await expectLetheRejection(
      registry.prepare('ngc', {
        options: { logits: { kind: 'log', temperature: 0 } },
        directory: directory({ model: '.' }),
      }),
      'E_ARG',
      'options.logits.temperature',
    );
    const prepared = await registry.prepare('ngc', { directory: directory({ model: '.' }) });
    expectLetheError(() => prepared.build({ capacity: 31 }, CONTEXT), 'E_BUDGET', 'capacity');
  });
});
