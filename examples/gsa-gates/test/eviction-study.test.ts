import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SweepResults } from '@lethe/eval';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';

// The committed eviction-in-the-loop study: five gates the registry loads, a results file of
// the sweep beside it, and the README's table quoting that file.
const STUDY = join(__dirname, '../study');
const README = readFileSync(join(__dirname, '../README.md'), 'utf8');
const SEEDS = [1, 2, 3, 4, 5];
const labelOf = (seed: number) => (seed === 1 ? 'gsa-evict' : `gsa-evict-seed${seed}`);
const BUDGETS = [1, 0.5, 0.25, 0.125];

beforeAll(async () => {
  await initBackend('wasm');
});

describe('study/evict-long', () => {
  const sweep = JSON.parse(readFileSync(join(STUDY, 'evict-long/sweep.json'), 'utf8'));
  const results: SweepResults = JSON.parse(
    readFileSync(join(STUDY, 'evict-long/results.json'), 'utf8'),
  );

  it('holds one gate per seed that the registry loads, trained with that seed', async () => {
    const registry = createDefaultRegistry();
    for (const seed of SEEDS) {
      const entry = sweep.policies.find((p: { label?: string }) => p.label === labelOf(seed));
      const dir = join(STUDY, 'evict-long', entry.dir);
      const training = JSON.parse(readFileSync(join(dir, 'training.json'), 'utf8'));
      expect(training.settings.seed).toBe(seed);
      expect(training.settings.eviction.budgets).toEqual([0.5, 0.25, 0.125]);
      const prepared = await registry.prepare('gsa', {
        directory: await nodePolicyStore().open(dir),
      });
      prepared.release();
    }
  });

  it('is quoted by the README, gate by gate, on 256 prompts', () => {
    const section = README.slice(README.indexOf('## Eviction in the loop'));
    for (const seed of SEEDS) {
      const row = section.split('\n').find((line) => line.includes(`seed ${seed} |`));
      expect(row, `row of seed ${seed}`).toBeDefined();
      const cells = row!.split('|').slice(2, 2 + BUDGETS.length);
      BUDGETS.forEach((budget, i) => {
        const cell = results.cells.find(
          (c) => c.key.policy === labelOf(seed) && c.key.budget === budget,
        );
        expect(cell?.metrics.accuracy?.n).toBe(256);
        expect(cells[i]).toContain(`${(100 * cell!.metrics.accuracy!.mean).toFixed(1)} %`);
      });
    }
  });
});
