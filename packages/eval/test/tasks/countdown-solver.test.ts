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

  it('in order: every operation of a state by pair and then + - * /, no heuristic', () => {
    const solution = solveCountdown([16, 12, 16], 64, { maxTries: 100, order: 'in-order' });
    expect(solution.lines.slice(0, 6)).toEqual([
      '16+12=28;16 28',
      ' 28+16=44',
      ' 28-16=12',
      ' 28*16=448',
      '16-12=4;16 4',
      ' 16+4=20',
    ]);
    expect(solution.lines.at(-1)).toBe(' 16*4=64');
    expect(solution.expression).toBe('16*(16-12)');
    expect(solution.tries).toBe(solution.lines.length);
  });

  it('in order, the top level lists the state’s operations as an independent enumeration does (property)', () => {
    /** Depth-0 operations of `numbers`: pairs i < j, larger first, + - * / where allowed, once each. */
    const topLevel = (numbers: readonly number[]): string[] => {
      const out: string[] = [];
      for (let i = 0; i < numbers.length; i++) {
        for (let j = i + 1; j < numbers.length; j++) {
          const a = Math.max(numbers[i]!, numbers[j]!);
          const b = Math.min(numbers[i]!, numbers[j]!);
          const ops: [string, number][] = [['+', a + b]];
          if (a > b) ops.push(['-', a - b]);
          if (b > 1) ops.push(['*', a * b]);
          if (b > 1 && a % b === 0) ops.push(['/', a / b]);
          for (const [op, value] of ops) {
            const line = `${a}${op}${b}=${value}`;
            if (!out.includes(line)) out.push(line);
          }
        }
      }
      return out;
    };
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 2, maxLength: 4 }),
        fc.integer({ min: 1, max: 200 }),
        (numbers, target) => {
          const solution = solveCountdown(numbers, target, { maxTries: 5000, order: 'in-order' });
          const top = solution.lines
            .filter((line) => !line.startsWith(' '))
            .map((line) => line.split(';')[0]!);
          const all = topLevel(numbers);
          expect(top).toEqual(all.slice(0, top.length));
          // the same tree as closest-first, searched whole: both reach the target or neither
          const closest = solveCountdown(numbers, target, { maxTries: 5000 });
          expect(solution.solved).toBe(closest.solved);
          if (!solution.solved) expect(solution.tries).toBe(closest.tries);
          const values = replayCountdownTrace(numbers, solution.lines);
          if (solution.solved) {
            expect(values.at(-1)).toBe(target);
            expect(checkCountdownExpression(solution.expression!, numbers)).toMatchObject({
              ok: true,
              value: target,
            });
          }
        },
      ),
      { numRuns: 200 },
    );
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

  it('with goal restated or checked, writes the target where it says and is otherwise the same search (property)', () => {
    expect(solveCountdown([16, 12, 16], 64, { maxTries: 100, goal: 'restated' }).lines).toEqual([
      '16+16=32;64:12 32',
      ' 32+12=44',
      ' 32-12=20',
      ' 32*12=384',
      '16+12=28;64:16 28',
      ' 28+16=44',
      ' 28-16=12',
      ' 28*16=448',
      '16-12=4;64:16 4',
      ' 16*4=64',
    ]);
    expect(solveCountdown([16, 12, 16], 64, { maxTries: 100, goal: 'checked' }).lines).toEqual([
      '16+16=32;64:12 32',
      ' 32+12=44;64',
      ' 32-12=20;64',
      ' 32*12=384;64',
      '16+12=28;64:16 28',
      ' 28+16=44;64',
      ' 28-16=12;64',
      ' 28*16=448;64',
      '16-12=4;64:16 4',
      ' 16*4=64;64',
    ]);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 2, maxLength: 4 }),
        fc.integer({ min: 1, max: 200 }),
        fc.constantFrom('in-order', 'closest-first' as const),
        fc.constantFrom('restated', 'checked' as const),
        (numbers, target, order, form) => {
          const plain = solveCountdown(numbers, target, { maxTries: 300, order });
          const goal = solveCountdown(numbers, target, { maxTries: 300, order, goal: form });
          const unstated = goal.lines.map((line) =>
            line.replace(`;${target}:`, ';').replace(new RegExp(`=(\\d+);${target}$`), '=$1'),
          );
          expect(unstated).toEqual(plain.lines);
          expect({ ...goal, lines: [] }).toEqual({ ...plain, lines: [] });
          expect(replayCountdownTrace(numbers, goal.lines, { target, form })).toEqual(
            replayCountdownTrace(numbers, plain.lines),
          );
          if (form === 'checked') {
            for (const line of goal.lines) expect(line).toMatch(new RegExp(`;${target}(:|$)`));
          }
        },
      ),
      { numRuns: 200 },
    );
    expectLetheError(
      () => solveCountdown([1, 2], 3, { maxTries: 4, goal: 'beside' as 'checked' }),
      'E_ARG',
      'goal',
    );
  });

  it('with maxValue, prunes every operation whose result exceeds it, and only those', () => {
    // The documented search without the products over 100: the same order over fewer children.
    expect(solveCountdown([16, 12, 16], 64, { maxTries: 100, maxValue: 100 }).lines).toEqual([
      '16+16=32;12 32',
      ' 32+12=44',
      ' 32-12=20',
      '16+12=28;16 28',
      ' 28+16=44',
      ' 28-16=12',
      '16-12=4;16 4',
      ' 16*4=64',
    ]);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 3, maxLength: 4 }),
        fc.integer({ min: 10, max: 100 }),
        fc.integer({ min: 100, max: 400 }),
        (numbers, target, maxValue) => {
          const bounded = solveCountdown(numbers, target, {
            maxTries: 5000,
            order: 'in-order',
            maxValue,
          });
          const values = replayCountdownTrace(numbers, bounded.lines);
          for (const value of values) expect(value).toBeLessThanOrEqual(maxValue);
          // The unbounded trace, its lines over the bound and their subtrees dropped, agrees
          // with the bounded one for as long as both run: the unbounded search may stop sooner,
          // at a solution through a result over the bound, or later, when the bounded search
          // runs out of tries.
          const full = solveCountdown(numbers, target, { maxTries: 100_000, order: 'in-order' });
          const kept: string[] = [];
          let skipBelow = Number.POSITIVE_INFINITY;
          let keptSolved = false;
          for (const line of full.lines) {
            const depth = line.length - line.trimStart().length;
            if (depth <= skipBelow) skipBelow = Number.POSITIVE_INFINITY;
            if (depth > skipBelow) continue;
            const value = Number(line.split(';')[0]!.split('=')[1]);
            if (value > maxValue) {
              skipBelow = depth;
              continue;
            }
            kept.push(line);
            keptSolved = value === target;
          }
          const common = Math.min(kept.length, bounded.lines.length);
          expect(bounded.lines.slice(0, common)).toEqual(kept.slice(0, common));
          if (keptSolved) expect(bounded.lines.length).toBeLessThanOrEqual(kept.length);
          if (bounded.solved) {
            expect(checkCountdownExpression(bounded.expression!, numbers)).toMatchObject({
              ok: true,
              value: target,
            });
          }
          if (keptSolved && bounded.lines.length === kept.length) expect(bounded.solved).toBe(true);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('validates its arguments', () => {
    expectLetheError(() => solveCountdown([3, 0], 3, { maxTries: 5 }), 'E_ARG', 'numbers');
    expectLetheError(
      () => solveCountdown([3, 2], 5, { maxTries: 5, order: 'bfs' as never }),
      'E_ARG',
      'order',
    );
    expectLetheError(() => solveCountdown([3, 2.5], 3, { maxTries: 5 }), 'E_ARG', 'numbers');
    expectLetheError(() => solveCountdown([3, 2], -1, { maxTries: 5 }), 'E_ARG', 'target');
    expectLetheError(() => solveCountdown([3, 2], 5, { maxTries: 0 }), 'E_ARG', 'maxTries');
    expectLetheError(
      () => solveCountdown([3, 2], 5, { maxTries: 5, maxValue: 0 }),
      'E_ARG',
      'maxValue',
    );
    expectLetheError(
      () => solveCountdown([3, 2], 5, { maxTries: 5, maxValue: 1.5 }),
      'E_ARG',
      'maxValue',
    );
  });
});
