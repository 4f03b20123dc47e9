import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkCountdownExpression,
  MAX_EXPRESSION_CHARS,
} from '../../src/tasks/countdown-expression';

const NUMBERS = [25, 5, 3, 7];

function reason(text: string, numbers: readonly number[] = NUMBERS): string {
  const check = checkCountdownExpression(text, numbers);
  if (check.ok) throw new Error(`expected a failure for ${text}, got ${check.value}`);
  return check.reason;
}

describe('checkCountdownExpression', () => {
  it('evaluates with precedence, left associativity and parentheses', () => {
    expect(checkCountdownExpression('(25+5)*3-7', NUMBERS)).toEqual({
      ok: true,
      value: 83,
      numbers: [25, 5, 3, 7],
    });
    expect(checkCountdownExpression('25+5*3', NUMBERS)).toMatchObject({ ok: true, value: 40 });
    expect(checkCountdownExpression('25-7-3', NUMBERS)).toMatchObject({ ok: true, value: 15 });
    expect(checkCountdownExpression(' 25 / 5 * 3 ', NUMBERS)).toMatchObject({
      ok: true,
      value: 15,
    });
    expect(checkCountdownExpression('((25))', NUMBERS)).toMatchObject({ ok: true, value: 25 });
  });

  it('lets numbers go unused and accepts a correct "= n" claim', () => {
    expect(checkCountdownExpression('25*3', NUMBERS)).toMatchObject({ ok: true, value: 75 });
    expect(checkCountdownExpression('25*3 = 75', NUMBERS)).toMatchObject({ ok: true, value: 75 });
    expect(reason('25*3=76')).toMatch(/wrong arithmetic: claims 76/);
  });

  it('enforces the multiset: reuse and foreign numbers are rejected', () => {
    expect(reason('25+25')).toBe('number 25 used more often than given');
    expect(reason('4*3')).toBe('number 4 is not one of the given numbers');
    expect(checkCountdownExpression('5*5', [5, 5, 2])).toMatchObject({ ok: true, value: 25 });
    expect(reason('5*5*5', [5, 5, 2])).toBe('number 5 used more often than given');
  });

  it('rejects non-positive and fractional intermediates', () => {
    expect(reason('3-7+25')).toBe('non-positive intermediate: 3-7=-4');
    expect(reason('7-(5+3)')).toBe('non-positive intermediate: 7-8=-1');
    expect(reason('25*(3-3)', [25, 3, 3])).toBe('non-positive intermediate: 3-3=0');
    expect(reason('7/3*25')).toBe('division with remainder: 7/3');
    expect(reason('25/(7-5)')).toBe('division with remainder: 25/2');
  });

  it('reports malformed text without throwing', () => {
    const malformed = [
      '',
      '   ',
      '25+',
      '(25+5',
      '25+5)',
      '-5+25',
      '25 5',
      '25x5',
      '25^2',
      '05+25',
      '25=',
      '25=3=3',
      '25+5=eighty',
      '()',
      `${'('.repeat(40)}25${')'.repeat(40)}`,
      'x'.repeat(MAX_EXPRESSION_CHARS + 1),
    ];
    for (const text of malformed) expect(reason(text)).toMatch(/^malformed: /);
  });

  it('never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 64 }),
        fc.array(fc.integer({ min: 1, max: 99 })),
        (s, n) => {
          const check = checkCountdownExpression(s, n);
          expect(typeof check.ok).toBe('boolean');
        },
      ),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9+\-*/() =]{0,40}$/), (s) => {
        const check = checkCountdownExpression(s, NUMBERS);
        if (check.ok) expect(Number.isInteger(check.value) && check.value > 0).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
