import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's SOL example, run as written by a bare `node` from this package's directory
// (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = readFileSync(join(pkg, '../../docs/embedding.md'), 'utf8');

/** What the first ```js block after `heading` prints. */
function runExampleAfter(heading: string): string {
  const at = doc.indexOf(heading);
  const match = /```js\n([\s\S]*?)```/.exec(doc.slice(at));
  if (at < 0 || match === null) throw new Error(`no example under ${heading}`);
  const { NODE_OPTIONS: _, ...env } = process.env;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', match[1]!], {
    cwd: pkg,
    env,
    encoding: 'utf8',
  });
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  return child.stdout;
}

describe('docs/embedding.md', () => {
  it('the SOL example prints each step’s controls, the rows κ reads, and the refresh', () => {
    const lines = runExampleAfter('### SOL').trim().split('\n');
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
