/**
 * Benchmarks of @lethe/es-cmaes, and the same measurements with CyberAgentAILab's `cmaes`
 * (Python) when it is installed (`python3 -c 'import cmaes'` works; Debian: python3-cmaes):
 *
 *   node scripts/pnpm.mjs --filter @lethe/es-cmaes bench            (from the repository root)
 *   BENCH_SEEDS=5 node scripts/pnpm.mjs --filter @lethe/es-cmaes bench
 *
 * 1. Milliseconds of ask + tell per generation (f excluded): separable CMA-ES at n = 4096,
 *    λ = 32, and full CMA-ES at n = 200 with the default λ = 19 (eigendecomposition every
 *    second generation, as the tutorial's lazy update gives; the mean over 100 generations
 *    after 10 of warm-up).
 * 2. Evaluations until f ≤ 1e-8 on sphere, ellipsoid (condition 10⁶) and Rosenbrock at n = 10
 *    and 20, from x0 = 3·1 with σ0 = 2, default λ, one run per seed (no restarts): the median
 *    over the runs that reach the target, and how many do.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CMAES, ellipsoid, rosenbrock, sphere } from '../src/index';

const SEEDS = Array.from({ length: Number(process.env.BENCH_SEEDS ?? 11) }, (_, i) => i + 1);
const FUNCTIONS = { sphere, ellipsoid, rosenbrock } as const;
type FunctionName = keyof typeof FUNCTIONS;

interface Timing {
  readonly name: string;
  readonly n: number;
  readonly lambda: number;
  readonly diagonal: boolean;
}

const TIMINGS: Timing[] = [
  { name: 'separable', n: 4096, lambda: 32, diagonal: true },
  { name: 'full', n: 200, lambda: 19, diagonal: false },
];

function timeGeneration({ n, lambda, diagonal }: Timing): { ask: number; tell: number } {
  const es = new CMAES({
    x0: new Float64Array(n).fill(3),
    sigma0: 2,
    seed: 1,
    populationSize: lambda,
    diagonal,
  });
  const warmup = 10;
  const generations = 100;
  let ask = 0;
  let tell = 0;
  for (let g = 0; g < warmup + generations; g++) {
    const t0 = performance.now();
    const xs = es.ask();
    const t1 = performance.now();
    const fitness = xs.map(ellipsoid);
    const t2 = performance.now();
    es.tell(xs, fitness);
    const t3 = performance.now();
    if (g >= warmup) {
      ask += t1 - t0;
      tell += t3 - t2;
    }
  }
  return { ask: ask / generations, tell: tell / generations };
}

function evaluationsToTarget(
  f: (x: Float64Array) => number,
  n: number,
  seed: number,
): number | undefined {
  const es = new CMAES({
    x0: new Float64Array(n).fill(3),
    sigma0: 2,
    seed,
    stopping: { ftarget: 1e-8 },
  });
  while (!es.stopped) {
    const xs = es.ask();
    es.tell(xs, xs.map(f));
  }
  return es.stopReasons.includes('ftarget') ? es.best!.evaluation : undefined;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface PeerResults {
  readonly version: string;
  readonly timings: Record<string, { ask: number; tell: number }>;
  readonly evaluations: Record<string, (number | null)[]>;
}

/** Runs bench/peer_cmaes.py when `import cmaes` works in python3; undefined otherwise. */
function peer(): PeerResults | undefined {
  const probe = spawnSync('python3', ['-c', 'import cmaes'], { encoding: 'utf8' });
  if (probe.status !== 0) return undefined;
  const script = fileURLToPath(new URL('./peer_cmaes.py', import.meta.url));
  const run = spawnSync('python3', [script, JSON.stringify({ seeds: SEEDS })], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (run.status !== 0) throw new Error(`peer_cmaes.py failed:\n${run.stderr}`);
  return JSON.parse(run.stdout) as PeerResults;
}

const fmt = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : '—');

const peerResults = peer();
const peerNote =
  peerResults === undefined
    ? 'peer: pending (python3 cannot import cmaes here)'
    : `peer: CyberAgentAILab cmaes ${peerResults.version}`;
console.log(`@lethe/es-cmaes benchmarks — node ${process.version}; ${peerNote}\n`);

console.log(
  '| variant | n | λ | ask ms | tell ms | ask + tell ms / generation | cmaes (Python) ms |',
);
console.log('|---|--:|--:|--:|--:|--:|--:|');
for (const t of TIMINGS) {
  const { ask, tell } = timeGeneration(t);
  const p = peerResults?.timings[t.name];
  console.log(
    `| ${t.name} | ${t.n} | ${t.lambda} | ${fmt(ask)} | ${fmt(tell)} | ${fmt(ask + tell)} | ${
      p === undefined ? 'pending' : fmt(p.ask + p.tell)
    } |`,
  );
}

console.log(
  `\n| f | n | median evaluations to 1e-8 (${SEEDS.length} seeds) | reached | cmaes (Python) median | reached |`,
);
console.log('|---|--:|--:|--:|--:|--:|');
for (const name of Object.keys(FUNCTIONS) as FunctionName[]) {
  for (const n of [10, 20]) {
    const evals = SEEDS.map((seed) => evaluationsToTarget(FUNCTIONS[name], n, seed));
    const solved = evals.filter((e): e is number => e !== undefined);
    const p = peerResults?.evaluations[`${name}-${n}`];
    const peerSolved = p?.filter((e): e is number => e !== null);
    console.log(
      `| ${name} | ${n} | ${fmt(median(solved), 0)} | ${solved.length}/${SEEDS.length} | ${
        peerSolved === undefined ? 'pending' : fmt(median(peerSolved), 0)
      } | ${peerSolved === undefined ? 'pending' : `${peerSolved.length}/${SEEDS.length}`} |`,
    );
  }
}
