import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { evictionRateTag, TAG_MARKUP, withEvictionRateTag } from '../src/index';

describe('interoception tag (§5.3)', () => {
  it.each([
    [0.5, '50'],
    [1, '100'],
    [0.1, '10'],
    [0.07, '7'], // 0.07 · 100 = 7.000000000000001
    [0.3, '30'],
    [0.125, '12.5'],
    [0.145, '14.5'], // 14.499999999999998
    [0.0725, '7.25'],
    [0.001, '0.1'],
    [0.0001, '0.01'],
    [1 / 3, '33.33'], // needs more than two decimals: rounded
    [2 / 3, '66.67'],
  ])('rate %f → %s%', (rate, percent) => {
    expect(evictionRateTag(rate)).toBe(`<eviction_rate>${percent}%</eviction_rate>`);
  });

  it('appends the tag to the prompt as is', () => {
    expect(withEvictionRateTag('Use 3, 5, 7 to make 22.', 0.5)).toBe(
      'Use 3, 5, 7 to make 22.<eviction_rate>50%</eviction_rate>',
    );
    expect(withEvictionRateTag('', 0.25)).toBe('<eviction_rate>25%</eviction_rate>');
  });

  it("writes 0% for no eviction (the curriculum's first stage)", () => {
    expect(evictionRateTag(0)).toBe('<eviction_rate>0%</eviction_rate>');
  });

  it('validates the rate: ε or 0', () => {
    for (const rate of [-0.5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectLetheError(() => evictionRateTag(rate), 'E_ARG', 'rate');
      expectLetheError(() => withEvictionRateTag('x', rate), 'E_ARG', 'rate');
    }
  });
});

describe('the markup form', () => {
  it('writes each markup string as its one character', () => {
    expect(evictionRateTag(0.3, 'markup')).toBe('⟨30%⟩');
    expect(withEvictionRateTag('p', 0.125, 'markup')).toBe('p⟨12.5%⟩');
    const spelt = evictionRateTag(0.3);
    expect(
      spelt
        .replace(TAG_MARKUP.open, TAG_MARKUP.openChar)
        .replace(TAG_MARKUP.close, TAG_MARKUP.closeChar),
    ).toBe(evictionRateTag(0.3, 'markup'));
  });
});
