import { describe, expect, it } from 'vitest';
import { niceAxis, scale } from '../../src/report/axis';
import { escapeHtml, escapeMarkdown, markdownCode } from '../../src/report/index';

describe('escaping', () => {
  it('escapes the five HTML-significant characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('keeps Markdown table cells on one line and inert', () => {
    expect(escapeMarkdown('a|b *c* <b>\nd')).toBe('a\\|b \\*c\\* \\<b\\> d');
    expect(escapeMarkdown('[x](javascript:1)')).toBe('\\[x\\](javascript:1)');
  });

  it('fences code spans around backtick runs and escapes pipes', () => {
    expect(markdownCode('lethe eval --task a')).toBe('`lethe eval --task a`');
    expect(markdownCode('echo `x` | y')).toBe('``echo `x` \\| y``');
    expect(markdownCode('`start')).toBe('`` `start ``');
  });
});

describe('niceAxis', () => {
  it('covers the data with ticks at 1, 2 or 5 × 10^k', () => {
    const axis = niceAxis([1152, 4480]);
    expect(axis.min).toBeLessThanOrEqual(1152);
    expect(axis.max).toBeGreaterThanOrEqual(4480);
    const steps = axis.ticks.slice(1).map((tick, i) => tick - axis.ticks[i]!);
    expect(new Set(steps).size).toBe(1);
    expect([100, 200, 500, 1000]).toContain(steps[0]);
    expect(axis.decimals).toBe(0);
  });

  it('starts at zero on request and handles a single value', () => {
    expect(niceAxis([9.4, 51.2], { fromZero: true }).min).toBe(0);
    expect(niceAxis([0], { fromZero: true })).toMatchObject({ min: 0, max: 1 });
    const single = niceAxis([6.84]);
    expect(single.min).toBeLessThan(6.84);
    expect(single.max).toBeGreaterThan(6.84);
    expect(niceAxis([0.3, 0.81]).decimals).toBe(1);
  });

  it('maps the domain onto the pixel range, flipped when to < from', () => {
    const axis = niceAxis([0, 100], { fromZero: true });
    expect(scale(axis, axis.min, 360, 20)).toBe(360);
    expect(scale(axis, axis.max, 360, 20)).toBe(20);
  });
});
