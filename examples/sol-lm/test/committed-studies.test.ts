import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { describe, expect, it } from 'vitest';

// The studies committed under study/: each controller loads as the registry's `sol` policy, each
// result file is the run its directory names, and the README quotes the result files.
const STUDY = join(__dirname, '../study');
const README = readFileSync(join(__dirname, '../README.md'), 'utf8');
const SEEDS = [1, 2, 3];

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

interface MethodRow {
  readonly method: string;
  readonly perplexity?: number;
  readonly accuracy?: number;
}
interface PointRow {
  readonly point: number;
  readonly methods: readonly MethodRow[];
}

/** The README's table row for operating point `point` in the section headed `heading`. */
function readmeRow(heading: string, point: number): string {
  const section = README.slice(README.indexOf(heading));
  const row = section.split('\n').find((line) => line.startsWith(`| ${point.toFixed(1)} `));
  if (row === undefined) throw new Error(`no row for ${point} under ${heading}`);
  return row;
}

const methodOf = (point: PointRow, method: string) =>
  point.methods.find((m) => m.method === method)!;

describe.each([
  ['lm-2l', 'frontier.json', '### Frontier, 2L action set', 'lm-2l-a10', 'documents', 128],
  [
    'countdown-c10-w16',
    'downstream.json',
    '### Downstream accuracy on Countdown',
    'cd-c10-w16',
    'examples',
    256,
  ],
] as const)('study/%s', (study, resultFile, heading, run, sizeKey, size) => {
  it('holds one controller per seed that the registry loads, trained with that seed', async () => {
    const registry = createDefaultRegistry();
    const controllers = new Set<string>();
    for (const seed of SEEDS) {
      const dir = join(STUDY, study, `seed${seed}`);
      expect(readJson(join(dir, 'training.json')).settings.seed).toBe(seed);
      const prepared = await registry.prepare('sol', {
        directory: await nodePolicyStore().open(join(dir, 'policy')),
      });
      prepared.release();
      controllers.add(readFileSync(join(dir, 'policy', 'controller.safetensors')).toString('hex'));
      const results = readJson(join(dir, resultFile));
      expect(results.settings.policy).toBe(`runs/${run}-seed${seed}/policy`);
      expect(results.settings[sizeKey]).toBe(size);
    }
    expect(controllers.size).toBe(SEEDS.length);
  });

  it('is quoted by the README, seed by seed', () => {
    const runs = SEEDS.map((seed) => readJson(join(STUDY, study, `seed${seed}`, resultFile)));
    for (const [i, first] of (runs[0].points as PointRow[]).entries()) {
      const row = readmeRow(heading, first.point);
      const quoted = runs.map((run) => {
        const sol = methodOf(run.points[i], 'sol');
        return study === 'lm-2l' ? sol.perplexity!.toFixed(2) : (100 * sol.accuracy!).toFixed(1);
      });
      expect(row).toContain(quoted.join(' / '));
    }
  });
});
