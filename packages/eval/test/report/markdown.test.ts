import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/report/index';
import { cell, fakeSweep } from './fixture';

/** Splits a GFM table line into cells, honouring `\|` escapes. */
function cells(line: string): string[] {
  return line
    .slice(2, -2)
    .split(/(?<!\\) \| /)
    .map((cell) => cell.trim());
}

describe('renderMarkdown', () => {
  const markdown = renderMarkdown(fakeSweep());
  const lines = markdown.trimEnd().split('\n');
  const table = lines.filter((line) => line.startsWith('|'));

  it('says how a budget becomes a capacity', () => {
    expect(markdown).toContain(
      'A budget b gives each example a ceiling of max(2, ⌈b · P⌉) live entries per KV head',
    );
  });

  it('writes a header, an alignment rule and one row per task × policy × budget', () => {
    expect(lines[0]).toBe('# Lethe evaluation report');
    expect(table).toHaveLength(2 + 20);
    const header = cells(table[0]!);
    expect(header).toEqual([
      'task',
      'policy',
      'budget',
      'realised budget',
      'seeds',
      'accuracy',
      'perplexity',
      'peak KV reduction',
      'net keep-rate',
      'live KV mean / peak',
      'tokens/s',
      'reproduce',
    ]);
    expect(cells(table[1]!)).toEqual(['---', '---', ...Array(9).fill('--:'), '---']);
    for (const line of table.slice(2)) expect(cells(line)).toHaveLength(header.length);
  });

  it('formats accuracy ± SE, perplexity, reduction, live counts and the command', () => {
    const h2o = cells(table.find((line) => line.includes('| h2o | 50% |'))!);
    expect(h2o[5]).toBe(`37.7% ± ${(Math.sqrt((0.377 * 0.623) / 255) * 100).toFixed(1)}`);
    expect(h2o[6]).toBe('—');
    expect(h2o[7]).toBe(`${(4480 / 2280).toFixed(2)}× ± ${((4480 / 2280) * 0.02).toFixed(2)}`);
    expect(h2o[9]).toBe('1890 / 2280');
    expect(h2o[11]).toBe(
      '`lethe eval --task countdown --policy h2o --budget 0.5 --seed 0 --examples 256 --out runs/sweep-a`',
    );
    const lmFull = cells(table.find((line) => line.startsWith('| lm | full |'))!);
    expect(lmFull[6]).toBe('6.84 ± 0.10');
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
    expect(row).toContain('\\<img src=x onerror=alert(1)\\>');
    expect(cells(row)).toHaveLength(12);
    expect(cells(row)[1]).toBe('a\\|b');
    expect(cells(row)[11]).toBe('``x `y` \\| z <script>``');
  });
});
