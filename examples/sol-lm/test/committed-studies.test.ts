import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { holmAdjust, pairedBootstrap } from '@lethe/eval';
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
    'lm-2l-w16',
    'frontier.json',
    '### Frontier with a width-16 controller (2L)',
    'lm-2l-a10-w16',
    'documents',
    128,
  ],
  ['lm-3l-w16', 'frontier.json', '### Frontier, 3L action set', 'lm-3l-w16', 'documents', 128],
  [
    'lm-2l-w16-t64',
    'frontier.json',
    '### Horizon T = 64 at three width-16 seeds',
    'lm-2l-w16-t64',
    'documents',
    128,
  ],
  [
    'lm-2l-w16-t4',
    'frontier.json',
    '### Horizon T = 4 at three width-16 seeds',
    'lm-2l-w16-t4',
    'documents',
    128,
  ],
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
        return resultFile === 'frontier.json'
          ? sol.perplexity!.toFixed(2)
          : (100 * sol.accuracy!).toFixed(1);
      });
      expect(row).toContain(quoted.join(' / '));
    }
  });
});

interface Comparison {
  readonly baseline: string;
  readonly bootstrap: { meanDifference: number; low: number; high: number; pValue: number };
  readonly holmP: number;
}

/** Each run's paired comparisons, recomputed from the per-document perplexities it keeps. */
function expectRecomputed(runs: readonly { points: unknown[] }[]): void {
  for (const run of runs) {
    const points = run.points as (PointRow & { comparisons: Comparison[]; bestRandom: never })[];
    const comparisons = points.flatMap((p) => p.comparisons);
    expect(comparisons.map((c) => c.holmP)).toEqual(
      holmAdjust(comparisons.map((c) => c.bootstrap.pValue)),
    );
    for (const point of points) {
      const sol = methodOf(point, 'sol') as MethodRow & { perplexities: number[] };
      for (const c of point.comparisons) {
        const baseline = (
          c.baseline === 'random' ? point.bestRandom : methodOf(point, c.baseline)
        ) as MethodRow & { perplexities: number[] };
        expect(c.bootstrap).toEqual(
          pairedBootstrap(sol.perplexities, baseline.perplexities, { resamples: 10_000 }),
        );
      }
    }
  }
}

describe.each(['lm-2l', 'lm-2l-w16', 'lm-2l-w16-t64'])('study/%s paired comparisons', (study) => {
  const runs = SEEDS.map((seed) => readJson(join(STUDY, study, `seed${seed}`, 'frontier.json')));

  it('recompute from the per-document perplexities the results keep', () => {
    expectRecomputed(runs);
  });

  it('put SOL below every baseline at every point and seed, as the README says', () => {
    for (const run of runs) {
      for (const point of run.points) {
        for (const c of point.comparisons as Comparison[]) {
          expect(c.bootstrap.high).toBeLessThan(0);
          expect(c.holmP).toBeLessThanOrEqual(0.05);
        }
      }
    }
  });

  it('are quoted by the README against the fixed schedule and the best random one, seed by seed', () => {
    const f = (x: number) => x.toFixed(2).replace('-', '−');
    const difference = (i: number, baseline: string) =>
      runs.map((run) => {
        const { bootstrap } = (run.points[i].comparisons as Comparison[]).find(
          (c) => c.baseline === baseline,
        )!;
        return bootstrap;
      });
    const points = runs[0].points as PointRow[];
    if (study === 'lm-2l-w16-t64') {
      // Its section quotes the count of the test above, not the differences.
      expect(README).toContain('at every point and seed (48 of 48\n  paired bootstraps');
      return;
    }
    if (study === 'lm-2l') {
      for (const [i, first] of points.entries()) {
        const row = readmeRow("Table 1's paired comparison", first.point);
        const quoted = difference(i, 'sol-fixed').map(
          (b) => `${f(b.meanDifference)} [${f(b.low)}, ${f(b.high)}]`,
        );
        expect(row).toContain(quoted.join(' · '));
      }
      return;
    }
    const section = README.slice(README.indexOf('### Frontier with a width-16 controller (2L)'));
    const means = (i: number, baseline: string) =>
      difference(i, baseline)
        .map((b) => f(b.meanDifference))
        .join(' / ');
    const last = points.length - 1;
    expect(section).toContain(
      `Against the fixed schedule the mean difference is ${means(0, 'sol-fixed')}\n  at s = 0.2 and ${means(last, 'sol-fixed')} at s = 0.8`,
    );
    expect(section).toContain(
      `against the best random schedule ${means(0, 'random').replace(' / ', ' /\n  ')} and ${means(last, 'random')}`,
    );
  });
});

describe('study/lm-3l-w16 paired comparisons', () => {
  const runs = SEEDS.map((seed) =>
    readJson(join(STUDY, 'lm-3l-w16', `seed${seed}`, 'frontier.json')),
  );

  it('recompute from the per-document perplexities the results keep', () => {
    expectRecomputed(runs);
  });

  it('put SOL lower in 31 of the 36 comparisons at s = 0.2, 0.4 and 0.8 and in none at 0.6, as the README says', () => {
    const lower = (keep: (point: number) => boolean) =>
      runs
        .flatMap((run) => run.points as (PointRow & { comparisons: Comparison[] })[])
        .filter((p) => keep(p.point))
        .flatMap((p) => p.comparisons)
        .filter((c) => c.holmP <= 0.05 && c.bootstrap.high < 0);
    expect(lower((point) => point !== 0.6)).toHaveLength(31);
    expect(lower((point) => point === 0.6)).toHaveLength(0);
    expect(README).toContain('Lower than the baselines in 31 of the 36 comparisons');
  });
});

describe('study/lm-2l-w16-t4 paired comparisons', () => {
  const runs = SEEDS.map((seed) =>
    readJson(join(STUDY, 'lm-2l-w16-t4', `seed${seed}`, 'frontier.json')),
  );
  const comparisons = (baseline?: string) =>
    runs
      .flatMap((run) => run.points as (PointRow & { comparisons: Comparison[] })[])
      .flatMap((p) => p.comparisons)
      .filter((c) => baseline === undefined || c.baseline === baseline);

  it('recompute from the per-document perplexities the results keep', () => {
    expectRecomputed(runs);
  });

  it('put SOL below the fixed schedule everywhere, lower in 34 of 48 and higher in one, as the README says', () => {
    const lower = (c: Comparison) => c.holmP <= 0.05 && c.bootstrap.high < 0;
    const higher = (c: Comparison) => c.holmP <= 0.05 && c.bootstrap.low > 0;
    expect(comparisons('sol-fixed').filter(lower)).toHaveLength(12);
    expect(comparisons().filter(lower)).toHaveLength(34);
    expect(comparisons().filter(higher)).toHaveLength(1);
    expect(
      Math.max(
        ...comparisons()
          .filter(lower)
          .map((c) => c.holmP),
      ),
    ).toBeLessThanOrEqual(0.019);
    expect(README).toContain('SOL is lower at every point and seed (12 of\n  12 paired bootstraps');
    expect(README).toContain('lower in 34 of 48 (Holm p ≤ 0.019), not told apart in 13');
  });
});

describe('study/pollution', () => {
  it('is quoted by the README, every cell with its interval', () => {
    const { settings, results } = readJson(join(STUDY, 'pollution', 'pollution.json'));
    expect(settings.documents).toBe(128);
    const section = README.slice(README.indexOf('### KV pollution'));
    const symbol = { tokenKeep: 'κ', mlpInputKeep: 'ρ', activationBits: 'q' } as const;
    type Test = { meanDifference: number; low: number; high: number };
    type Result = { axis: keyof typeof symbol; value: number; refreshed: boolean };
    const cell = (t: Test) =>
      [t.meanDifference, t.low, t.high].map((x) => x.toFixed(4).replace('-', '−'));
    for (const r of results.filter((x: Result) => !x.refreshed)) {
      const refreshed = results.find((x: Result) => x.refreshed && x.axis === r.axis);
      const [m, lo, hi] = cell(r.directTest);
      const [tm, tlo, thi] = cell(r.tailTest);
      const [rm, rlo, rhi] = cell(refreshed.tailTest);
      expect(section).toContain(
        `| ${symbol[r.axis as Result['axis']]} = ${r.value} | ${m} (${lo} – ${hi}) | ${tm} (${tlo} – ${thi}) | ${rm} (${rlo} – ${rhi}) |`,
      );
    }
  });
});
