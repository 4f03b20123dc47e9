/**
 * Milliseconds per `Scorer.score` call of the NAMM scorers on one head's n live entries:
 * BAM (F = 25, H = 32) — its WebAssembly SIMD kernel and its portable form, timed in turn in this
 * one run, with their ratio — and MLP (F = 25, D = 2) at n = 256, 1024 and 4096, random genome
 * and features; the median and best per-call time over repeated calls after a warm-up (the best
 * is the steadier figure on a shared machine). Run from packages/policies-namm:
 *
 *   npm run bench:scorer
 */
import { BamScorer } from '../src/scorer/bam-scorer';
import { describeGenome, scorerParameterCount } from '../src/scorer/genome-layout';
import { createScorer, type Scorer } from '../src/scorer/scorer';
import { DEFAULT_BAM_HIDDEN, DEFAULT_MLP_DEPTH, type ScorerSpec } from '../src/scorer/scorer-spec';

const FEATURES = 25;
const SIZES = [256, 1024, 4096];
const SPECS: ScorerSpec[] = [
  { kind: 'bam', features: FEATURES, hidden: DEFAULT_BAM_HIDDEN },
  { kind: 'mlp', features: FEATURES, depth: DEFAULT_MLP_DEPTH },
];

/** Uniform in [−scale, scale) from a fixed-seed LCG, so runs are comparable. */
function fillRandom(values: Float32Array | Float64Array, seed: number, scale: number): void {
  let state = seed >>> 0;
  for (let i = 0; i < values.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    values[i] = (state / 2 ** 32 - 0.5) * 2 * scale;
  }
}

/** Per-call milliseconds (median and best) over calls totalling about `budgetMs`, after a warm-up. */
function timeCalls(call: () => void, budgetMs: number): { median: number; best: number } {
  const warmupEnd = performance.now() + budgetMs / 4;
  while (performance.now() < warmupEnd) call();
  const times: number[] = [];
  const end = performance.now() + budgetMs;
  while (performance.now() < end || times.length < 5) {
    const t0 = performance.now();
    call();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median: times[times.length >> 1]!, best: times[0]! };
}

/** The scorers timed for a spec: BAM's kernel and portable form, or the MLP. */
function scorersOf(spec: ScorerSpec, genome: Float64Array): [string, Scorer][] {
  if (spec.kind !== 'bam') return [['', createScorer(spec, genome)]];
  return [
    ['kernel   ', new BamScorer(spec, genome)],
    ['portable ', new BamScorer(spec, genome, { kernel: false })],
  ];
}

for (const spec of SPECS) {
  const genome = new Float64Array(scorerParameterCount(spec));
  fillRandom(genome, 1, 0.3);
  const scorers = scorersOf(spec, genome);
  const label = describeGenome(spec)
    .map((s) => s.name)
    .join(' ');
  console.log(`${spec.kind} (${scorers[0]![1].parameterCount} parameters: ${label})`);
  for (const n of SIZES) {
    const x = new Float32Array(n * FEATURES);
    fillRandom(x, n, 1);
    const out = new Float32Array(n);
    const times = scorers.map(([name, scorer]) => {
      const { median, best } = timeCalls(() => scorer.score(x, n, out), 2000);
      console.log(
        `  ${name}n = ${String(n).padStart(4)}: ${median.toFixed(3)} ms per call (median; best ${best.toFixed(3)})`,
      );
      return median;
    });
    if (times.length === 2) {
      console.log(`  portable / kernel at n = ${n}: ${(times[1]! / times[0]!).toFixed(2)}×`);
    }
  }
}
