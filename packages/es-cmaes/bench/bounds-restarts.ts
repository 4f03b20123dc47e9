/**
 * Restart strategies and bound handling, measured on this machine (no peer needed):
 *
 *   node scripts/pnpm.mjs --filter @lethe/es-cmaes bench:bounds     (from the repository root)
 *   BENCH_SEEDS=5 npx tsx bench/bounds-restarts.ts                    (from this package)
 *
 * 1. Rastrigin, n = 10, in [−5, 5]¹⁰, x0 = 3·1, σ0 = 2, ftarget 1e-8, IPOP and BIPOP with the
 *    default `maxRestarts` (9; restarts start uniformly in the box), each with `mirror` and
 *    `resample` bound handling: runs reaching the target, and the median evaluations of those.
 * 2. Two smooth bounded problems in [−5, 5]¹⁰ from x0 = 3·1, σ0 = 2, one run each (no
 *    restarts), to f − f* ≤ 1e-8: the ellipsoid (condition 10⁶, optimum 0 inside the box) and
 *    Σ (x_i − s_i)² with s = (6, 1, 6, 1, …) (optimum on the bound x_i = 5 in half the
 *    coordinates, f* = 5).
 */
import {
  type BoundHandling,
  ellipsoid,
  optimize,
  type RestartStrategy,
  rastrigin,
} from '../src/index';

const SEEDS = Array.from({ length: Number(process.env.BENCH_SEEDS ?? 10) }, (_, i) => i + 1);
const N = 10;
const HANDLINGS: BoundHandling[] = ['mirror', 'resample'];
const box = { lower: -5, upper: 5 } as const;

interface Outcome {
  readonly solved: boolean;
  readonly evaluations: number;
  /** f − f* at the end. */
  readonly gap: number;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function summarise(label: string, outcomes: readonly Outcome[]): void {
  const solved = outcomes.filter((o) => o.solved).map((o) => o.evaluations);
  const all = outcomes.map((o) => o.evaluations);
  const gap = median(outcomes.map((o) => o.gap));
  console.log(
    `| ${label} | ${solved.length}/${outcomes.length} | ${median(solved).toFixed(0)} | ${median(all).toFixed(0)} | ${gap.toExponential(1)} |`,
  );
}

function restarts(strategy: RestartStrategy, boundHandling: BoundHandling, seed: number): Outcome {
  const result = optimize(rastrigin, {
    x0: new Float64Array(N).fill(3),
    sigma0: 2,
    seed,
    ...box,
    boundHandling,
    restarts: { strategy },
    stopping: { ftarget: 1e-8 },
  });
  return { solved: result.f <= 1e-8, evaluations: result.evaluations, gap: result.f };
}

const shifted = Float64Array.from({ length: N }, (_, i) => (i % 2 === 0 ? 6 : 1));
const SMOOTH = {
  'ellipsoid (optimum inside)': { f: ellipsoid, fStar: 0 },
  'shifted sphere (optimum on the bound in 5 coordinates)': {
    f: (x: Float64Array): number => {
      let s = 0;
      for (let i = 0; i < N; i++) s += (x[i]! - shifted[i]!) ** 2;
      return s;
    },
    fStar: 5,
  },
} as const;

function smooth(name: keyof typeof SMOOTH, boundHandling: BoundHandling, seed: number): Outcome {
  const { f, fStar } = SMOOTH[name];
  const result = optimize(f, {
    x0: new Float64Array(N).fill(3),
    sigma0: 2,
    seed,
    ...box,
    boundHandling,
    stopping: { ftarget: fStar + 1e-8 },
  });
  const gap = result.f - fStar;
  return { solved: gap <= 1e-8, evaluations: result.evaluations, gap };
}

console.log(
  `@lethe/es-cmaes bound handling and restarts — node ${process.version}, seeds 1–${SEEDS.length}\n`,
);
console.log(
  '| Rastrigin n = 10 in [−5, 5]¹⁰ | solved | median evaluations (solved) | median evaluations (all) | median final f |',
);
console.log('|---|--:|--:|--:|--:|');
for (const strategy of ['ipop', 'bipop'] as const) {
  for (const handling of HANDLINGS) {
    summarise(
      `${strategy}, ${handling}`,
      SEEDS.map((seed) => restarts(strategy, handling, seed)),
    );
  }
}
console.log(
  '\n| smooth, n = 10 in [−5, 5]¹⁰, one run | reached | median evaluations (reached) | median evaluations (all) | median final f − f* |',
);
console.log('|---|--:|--:|--:|--:|');
for (const name of Object.keys(SMOOTH) as (keyof typeof SMOOTH)[]) {
  for (const handling of HANDLINGS) {
    summarise(
      `${name}, ${handling}`,
      SEEDS.map((seed) => smooth(name, handling, seed)),
    );
  }
}
