import { type PolicyContext, PolicyRegistry } from '@lethe/kv-cache';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { HEURISTIC_PROVIDERS, QuestSelector, questProvider } from '../src/index';

const registry = new PolicyRegistry([questProvider]);
const context: PolicyContext = {
  model: { layers: 4, kvHeads: 2, queryHeads: 4, headDim: 8, hiddenSize: 32 },
  sequences: 2,
};

describe('questProvider', () => {
  it('is a heuristic provider of read budgets with Quest’s defaults', async () => {
    expect(HEURISTIC_PROVIDERS).toContain(questProvider);
    expect(questProvider.name).toBe('quest');
    expect(questProvider.budgetForms).toEqual(['read']);
    expect(questProvider.learned).toBeUndefined();
    const prepared = await registry.prepare('quest');
    expect(prepared.budgetForms).toEqual(['read']);
    expect(prepared.options).toEqual({
      pageSize: 16,
      minPages: 3,
      denseLayers: 2,
      groupReduce: 'max',
    });
  });

  it('builds a QuestSelector for the read budget and its options, evicting nothing', async () => {
    const defaults = (await registry.prepare('quest')).build({ readTokens: 64 }, context);
    expect(Object.keys(defaults)).toEqual(['readSelector']);
    const quest = defaults.readSelector as QuestSelector;
    expect(quest).toBeInstanceOf(QuestSelector);
    expect([quest.tokenBudget, quest.pageSize, quest.minPages, quest.denseLayers]).toEqual([
      64, 16, 3, 2,
    ]);
    expect([quest.groupReduce, quest.pageBudget]).toEqual(['max', 4]);
    const options = { pageSize: 2, minPages: 1, denseLayers: 0, groupReduce: 'sum' };
    const given = (await registry.prepare('quest', { options })).build({ readTokens: 7 }, context)
      .readSelector as QuestSelector;
    expect([given.tokenBudget, given.pageSize, given.minPages, given.denseLayers]).toEqual([
      7, 2, 1, 0,
    ]);
    // ⌊7 / 2⌋ pages, the newest included
    expect([given.groupReduce, given.pageBudget]).toEqual(['sum', 3]);
    // no ceiling: a read budget bounds no memory
    expect(
      (await registry.prepare('quest')).build({ readTokens: 8 }, context).ceiling,
    ).toBeUndefined();
  });

  it('refuses memory and compute budgets, and a malformed read budget, with E_BUDGET', async () => {
    const prepared = await registry.prepare('quest');
    const targets = { tokenKeep: 0.5, mlpInputKeep: 1, precision: 1 };
    for (const budget of [{ capacity: 16 }, { keepRatio: 0.5, every: 4 }, { targets }]) {
      expectLetheError(() => prepared.build(budget, context), 'E_BUDGET', 'budget');
      // the provider itself refuses them too, when called without the registry
      expectLetheError(
        () =>
          questProvider.build({
            budget,
            options: prepared.options as never,
            context,
            parameters: undefined,
          }),
        'E_BUDGET',
        'budget',
      );
    }
    for (const readTokens of [0, -4, 2.5, Number.NaN]) {
      expectLetheError(
        () => prepared.build({ readTokens }, context),
        'E_BUDGET',
        'budget.readTokens',
      );
    }
  });

  it('refuses bad options naming them', async () => {
    const refused = (options: Record<string, unknown>, argument: string) =>
      expectLetheRejection(registry.prepare('quest', { options }), 'E_ARG', argument);
    await refused({ pageSize: 0 }, 'options.pageSize');
    await refused({ pageSize: 2.5 }, 'options.pageSize');
    await refused({ minPages: 0 }, 'options.minPages');
    await refused({ denseLayers: -1 }, 'options.denseLayers');
    await refused({ groupReduce: 'mean' }, 'options.groupReduce');
    await refused({ tokenBudget: 64 }, 'options.tokenBudget');
  });
});
