import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkCountdownExpression } from '../../src/tasks/countdown-expression';
import { solveCountdown } from '../../src/tasks/countdown-solver';
import { replayCountdownTrace } from './countdown-trace';

describe('solveCountdown', () => {
  it('writes the documented trace, backtracks included', () => {
    const solution = solveCountdown([16, 12, 16], 64, { maxTries: 100 });
    expect(solution).toEqual({
      solved: true,
      lines: [
        '16+16=32;12 32',
        ' 32+12=44',
        ' 32-12=20',
        ' 32*12=384',
        '16+12=28;16 28',
        ' 28+16=44',
        ' 28-16=12',
        ' 28*16=448',
        '16-12=4;16 4',
        ' 16*4=64',
      ],
      expression: '16*(16-12)',
      tries: 10,
    });
  });

  it('stops at the first hit, possibly leaving numbers unused', () => {
    const solution = solveCountdown([8, 7, 3, 2], 53, { maxTries: 10 });
    expect(solution.lines).toEqual(['8*7=56;3 2 56', ' 56-3=53']);
    expect(solution.expression).toBe('8*7-3');
  });

  it('gives up after maxTries operations', () => {
    const solution = solveCountdown([16, 12, 16], 64, { maxTries: 9 });
    expect(solution.solved).toBe(false);
    expect(solution.tries).toBe(9);
    expect(solution.expression).toBeUndefined();
  });

  it('exhausts the search on unreachable targets', () => {
    const solution = solveCountdown([1, 1], 5, { maxTries: 1000 });
    expect(solution).toEqual({ solved: false, lines: ['1+1=2'], tries: 1 });
    const wide = solveCountdown([2, 3, 5], 97, { maxTries: 10_000 });
    expect(wide.solved).toBe(false);
    expect(wide.tries).toBeGreaterThan(10);
    expect(replayCountdownTrace([2, 3, 5], wide.lines)).not.toContain(97);
  });

  it('produces replayable traces and verified equations (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 2, maxLength: 4 }),
        fc.integer({ min: 1, max: 200 }),
        (numbers, target) => {
          const solution = solveCountdown(numbers, target, { maxTries: 200 });
          expect(solution.tries).toBe(solution.lines.length);
          expect(solution.tries).toBeLessThanOrEqual(200);
          const values = replayCountdownTrace(numbers, solution.lines);
          if (!solution.solved) {
            expect(values).not.toContain(target);
            return;
          }
          expect(values.indexOf(target)).toBe(values.length - 1);
          const check = checkCountdownExpression(solution.expression!, numbers);
          expect(check).toMatchObject({ ok: true, value: target });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('validates its arguments', () => {
    expectLetheError(() => solveCountdown([3, 0], 3, { maxTries: 5 }), 'E_ARG', 'numbers');
    expectLetheError(() => solveCountdown([3, 2.5], 3, { maxTries: 5 }), 'E_ARG', 'numbers');
    expectLetheError(() => solveCountdown([3, 2], -1, { maxTries: 5 }), 'E_ARG', 'target');
    expectLetheError(() => solveCountdown([3, 2], 5, { maxTries: 0 }), 'E_ARG', 'maxTries');
  });
});
