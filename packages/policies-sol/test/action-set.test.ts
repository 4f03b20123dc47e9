import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTION_PRESETS, ActionSet, netKeepRate, presetLevels } from '../src/index';

describe('ActionSet', () => {
  it('enumerates the Cartesian product, each axis ascending, and indexOf inverts action', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 5 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 5 }),
        fc.uniqueArray(fc.integer({ min: 2, max: 16 }), { minLength: 1, maxLength: 5 }),
        (token, prune, bits) => {
          const set = new ActionSet({
            tokenKeep: token.map((v) => v / 100),
            mlpInputKeep: prune.map((v) => v / 100),
            activationBits: bits,
          });
          expect(set.size).toBe(token.length * prune.length * bits.length);
          const seen = new Set<string>();
          for (let a = 0; a < set.size; a++) {
            const action = set.action(a);
            seen.add(JSON.stringify(action));
            expect(set.indexOf(action)).toBe(a);
            expect(set.usage(a)).toEqual([
              action.tokenKeep,
              action.mlpInputKeep,
              action.activationBits / 16,
            ]);
          }
          expect(seen.size).toBe(set.size);
          // the first action takes every axis's lowest level, the last every highest
          expect(set.action(0).tokenKeep).toBe(Math.min(...token) / 100);
          expect(set.action(set.size - 1).activationBits).toBe(Math.max(...bits));
        },
      ),
    );
  });

  it('the presets have the sizes of App. B', () => {
    const sizes = Object.fromEntries(
      Object.keys(ACTION_PRESETS).map((name) => [name, new ActionSet(presetLevels(name)).size]),
    );
    expect(sizes).toEqual({ '2L': 8, '3L': 27, FL: 1560, 'FL-336': 336 });
    expect(new ActionSet(presetLevels('FL')).levels.mlpInputKeep.slice(0, 3)).toEqual([
      0.4, 0.45, 0.5,
    ]);
    expectLetheError(() => presetLevels('4L'), 'E_ARG', 'preset');
  });

  it('rejects empty and repeated levels, rates outside (0, 1] and bits outside 2–16', () => {
    const ok = { tokenKeep: [0.5, 1], mlpInputKeep: [1], activationBits: [16] };
    expectLetheError(() => new ActionSet({ ...ok, tokenKeep: [] }), 'E_ARG', 'levels.tokenKeep');
    expectLetheError(
      () => new ActionSet({ ...ok, mlpInputKeep: [0.5, 1, 0.5] }),
      'E_ARG',
      'levels.mlpInputKeep',
    );
    expectLetheError(
      () => new ActionSet({ ...ok, tokenKeep: [0, 1] }),
      'E_BUDGET',
      'levels.tokenKeep',
    );
    expectLetheError(
      () => new ActionSet({ ...ok, mlpInputKeep: [Number.NaN] }),
      'E_BUDGET',
      'levels.mlpInputKeep',
    );
    for (const bad of [1, 17, 4.5]) {
      expectLetheError(
        () => new ActionSet({ ...ok, activationBits: [bad] }),
        'E_ARG',
        'levels.activationBits',
      );
    }
    const set = new ActionSet(ok);
    expectLetheError(() => set.action(2), 'E_ARG', 'action');
    expectLetheError(
      () => set.indexOf({ tokenKeep: 0.7, mlpInputKeep: 1, activationBits: 16 }),
      'E_ARG',
      'action.tokenKeep',
    );
  });

  it('the net keep rate averages the enabled axes only', () => {
    const joint = new ActionSet(presetLevels('2L'));
    expect(joint.enabled).toEqual([true, true, true]);
    expect(netKeepRate([0.1, 0.6, 5 / 16], joint.enabled)).toBeCloseTo(
      (0.1 + 0.6 + 5 / 16) / 3,
      12,
    );
    const tokenOnly = new ActionSet({
      tokenKeep: [0.1, 0.5, 1],
      mlpInputKeep: [1],
      activationBits: [16],
    });
    expect(tokenOnly.enabled).toEqual([true, false, false]);
    expect(netKeepRate([0.3, 1, 1], tokenOnly.enabled)).toBe(0.3);
    // a single level below dense still counts: it saves compute
    expect(
      new ActionSet({ tokenKeep: [1], mlpInputKeep: [0.5], activationBits: [16] }).enabled,
    ).toEqual([false, true, false]);
  });
});
