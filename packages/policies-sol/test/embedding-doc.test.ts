import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDocExample } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's SOL example, run as written by a bare `node` from this package's directory
// (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(pkg, '../../docs/embedding.md');

describe('docs/embedding.md', () => {
  it('the SOL example prints each step’s controls, the rows κ reads, and the refresh', () => {
    const lines = runDocExample(doc, '### SOL', pkg).trim().split('\n');
    expect(lines).toHaveLength(7);
    expect(lines[4]).toBe("refresh the last 4 tokens' KV rows");
    const steps = [...lines.slice(0, 4), ...lines.slice(5)];
    const kappas = new Set<number>();
    steps.forEach((line, t) => {
      const match = /^step (\d): κ ([\d.]+) reads rows (.*); ρ ([\d.]+); q (\d+)$/.exec(line);
      expect(match, line).not.toBeNull();
      const [, step, kappa, rows, rho, bits] = match!;
      expect(Number(step)).toBe(t);
      // The 2L action set's levels.
      expect([0.1, 1]).toContain(Number(kappa));
      expect([0.6, 1]).toContain(Number(rho));
      expect([5, 16]).toContain(Number(bits));
      kappas.add(Number(kappa));
      const ranges = rows!.split(', ').map((range) => range.split('–').map(Number));
      const read = ranges.reduce((sum, [start, end]) => sum + end! - start! + 1, 0);
      if (Number(kappa) === 1) {
        expect(ranges).toEqual([[0, 63]]);
      } else {
        // ⌈0.1 · 64⌉ = 7 rows: the 4 sinks and the 2-row window, then one page of 8.
        expect(ranges[0]).toEqual([0, 3]);
        expect(ranges.at(-1)![1]).toBe(63);
        expect(read).toBeLessThanOrEqual(14);
      }
    });
    expect(kappas.size).toBe(2);
  });
});
