import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/report/index';
import { meanInterval, wilsonInterval } from '../../src/report/interval';
import { cell, fakeSweep, wideSweep } from './fixture';

/** Splits a GFM table line into cells, honouring `\|` escapes. */
function cells(line: string): string[] {
  return line
    .slice(2, -2)
    .split(/(?<!\\) \| /)
    .map((cell) => cell.trim());
}

/** The table lines of the section headed `## heading`. */
function tableOf(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
}

const percent = (value: number) => (value * 100).toFixed(1);

describe('renderMarkdown', () => {
  const markdown = renderMarkdown(fakeSweep());
  const lines = markdown.trimEnd().split('\n');

  it('opens with the summary: seeds by id, the budget rule and the interval method', () => {
    expect(lines[0]).toBe('# Lethe evaluation report');
    expect(markdown).toContain('Each point pools 64–256 examples (seed 0).');
    expect(markdown).toContain(
      'A budget b gives each example a ceiling of max(2, ⌈b · P⌉) live entries per KV head',
    );
    expect(markdown).toContain('the Wilson score interval of the pooled outcomes');
    expect(markdown.indexOf('## countdown')).toBeLessThan(markdown.indexOf('## lm'));
    expect(markdown.indexOf('## lm')).toBeLessThan(markdown.indexOf('## All rows'));
  });

  it('has a policy × budget table per task with 95% intervals and the best in bold', () => {
    expect(markdown).toContain(
      `Full cache (100%): 51.2% (${percent(wilsonInterval(131, 256).low)}–${percent(wilsonInterval(131, 256).high)}).`,
    );
    const table = tableOf(markdown, 'countdown');
    expect(cells(table[0]!)).toEqual([
      'policy',
      `25% (realised ${percent(1152 / 4480)}–${percent(1170 / 4480)}%)`,
      `50% (realised ${percent(2272 / 4480)}–${percent(2290 / 4480)}%)`,
      `75% (realised ${percent(3392 / 4480)}–${percent(3410 / 4480)}%)`,
    ]);
    expect(cells(table[1]!)).toEqual(['---', '--:', '--:', '--:']);
    const h2o = cells(table.find((line) => line.startsWith('| h2o |'))!);
    const { low, high } = wilsonInterval(97, 256);
    expect(h2o[2]).toBe(`${percent(97 / 256)}% (${percent(low)}–${percent(high)})`);
    const snapkv = cells(table.find((line) => line.startsWith('| snapkv |'))!);
    expect(snapkv[1]).toMatch(/^\*\*24\.6%\*\* \(/);
    const lm = tableOf(markdown, 'lm');
    const lmSnapkv = cells(lm.find((line) => line.startsWith('| snapkv |'))!);
    const t = meanInterval({ mean: 9.21, stderr: 9.21 * 0.015, n: 64 });
    expect(lmSnapkv[1]).toBe(`**9.21** (${t.low.toFixed(2)}–${t.high.toFixed(2)})`);
  });

  it('names policies with identical results', () => {
    const wide = renderMarkdown(wideSweep());
    expect(tableOf(wide, 'retrieval').some((line) => line.startsWith('| knorm (= l2norm) |'))).toBe(
      true,
    );
    expect(wide).toContain(
      'Identical results at every budget (to the precision shown): knorm = l2norm.',
    );
  });

  it('ends with every row: header, alignment rule and one row per task × policy × budget', () => {
    const table = tableOf(markdown, 'All rows');
    expect(table).toHaveLength(2 + 20);
    const header = cells(table[0]!);
    expect(header).toEqual([
      'task',
      'policy',
      'budget',
      'realised budget',
      'examples (seeds)',
      'accuracy (95% CI)',
      'perplexity (95% CI)',
      'peak KV reduction',
      'net keep-rate',
      'live KV mean / peak',
      'tokens/s',
      'reproduce',
    ]);
    expect(cells(table[1]!)).toEqual(['---', '---', ...Array(9).fill('--:'), '---']);
    for (const line of table.slice(2)) expect(cells(line)).toHaveLength(header.length);
    const h2o = cells(table.find((line) => line.includes('| h2o | 50% |'))!);
    expect(h2o[4]).toBe('256 (seed 0)');
    expect(h2o[6]).toBe('—');
    expect(h2o[7]).toBe(`${(4480 / 2280).toFixed(2)}×`);
    expect(h2o[9]).toBe('1890 / 2280');
    expect(h2o[11]).toBe(
      '`lethe eval --task countdown --policy h2o --budget 0.5 --seed 0 --examples 256 --out runs/sweep-a`',
    );
    const lmFull = cells(table.find((line) => line.startsWith('| lm | full |'))!);
    const t = meanInterval({ mean: 6.84, stderr: 6.84 * 0.015, n: 64 });
    expect(lmFull[6]).toBe(`6.84 (${t.low.toFixed(2)}–${t.high.toFixed(2)})`);
    expect(lmFull[5]).toBe('—');
  });

  it('escapes names and commands so no HTML, link or extra cell can be injected', () => {
    const evil = cell('<img src=x onerror=alert(1)>', 'a|b', 1, {
      accuracy: 0.5,
      peak: 10,
      live: 5,
      fullPeak: 10,
      tokensPerSecond: 1,
    });
    const sweep = { ...fakeSweep(), cells: [{ ...evil, command: 'x `y` | z\n<script>' }] };
    const output = renderMarkdown(sweep);
    const row = output.trimEnd().split('\n').at(-1)!;
    expect(output).not.toMatch(/(?<!\\)<img/);
    expect(output).toContain('## \\<img src=x onerror=alert(1)\\>');
    expect(row).toContain('\\<img src=x onerror=alert(1)\\>');
    expect(cells(row)).toHaveLength(12);
    expect(cells(row)[1]).toBe('a\\|b');
    expect(cells(row)[11]).toBe('``x `y` \\| z <script>``');
  });
});
