import { expectLetheError } from '@lethe/test-utils';
import { describe, it } from 'vitest';
import {
  H2OPolicy,
  KeyDiffPolicy,
  KNormPolicy,
  L2NormPolicy,
  QuestSelector,
  RandomPolicy,
  SnapKVPolicy,
  StreamingLLMPolicy,
  TOVAPolicy,
} from '../src/index';

/** Every heuristic, built from options a JavaScript caller may pass. */
const POLICIES: readonly [string, (options: unknown) => unknown][] = [
  ['H2OPolicy', (o) => new H2OPolicy(o as never)],
  ['KeyDiffPolicy', (o) => new KeyDiffPolicy(o as never)],
  ['KNormPolicy', (o) => new KNormPolicy(o as never)],
  ['L2NormPolicy', (o) => new L2NormPolicy(o as never)],
  ['RandomPolicy', (o) => new RandomPolicy(o as never)],
  ['SnapKVPolicy', (o) => new SnapKVPolicy(o as never)],
  ['StreamingLLMPolicy', (o) => new StreamingLLMPolicy(o as never)],
  ['TOVAPolicy', (o) => new TOVAPolicy(o as never)],
];

describe('policy constructors refuse options that are not objects with a coded error, never a TypeError', () => {
  it.each(POLICIES)('%s', (_, make) => {
    for (const options of [undefined, null, 3, [], 'h2o']) {
      expectLetheError(() => make(options), 'E_ARG', 'options');
    }
    for (const budget of [undefined, null, 5, [1], 'half']) {
      expectLetheError(() => make({ budget }), 'E_BUDGET', 'budget');
    }
    const budget = { keepCount: 80 };
    for (const trigger of [5, 'often', [1]]) {
      expectLetheError(() => make({ budget, trigger }), 'E_ARG', 'trigger');
    }
    for (const anchors of [5, 'none', [0, 1]]) {
      expectLetheError(() => make({ budget, anchors }), 'E_ARG', 'anchors');
    }
  });

  it('QuestSelector', () => {
    for (const options of [undefined, null, 3, []]) {
      expectLetheError(() => new QuestSelector(options as never), 'E_ARG', 'options');
    }
  });
});
