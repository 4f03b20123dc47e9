import { CMAES, type CMAESOptions, symmetricEigen } from '../src/index';

/** Runs ask/tell until the run stops or `maxGenerations`; returns the evaluations used. */
export function runToStop(
  es: CMAES,
  f: (x: Float64Array) => number,
  maxGenerations = Number.POSITIVE_INFINITY,
): number {
  for (let g = 0; g < maxGenerations && !es.stopped; g++) {
    const xs = es.ask();
    es.tell(xs, xs.map(f));
  }
  return es.evaluations;
}

/** Evaluations until f ≤ 1e-8 from x0 = 3·1, σ0 = 2 (undefined when the run stops first). */
export function evaluationsToTarget(
  f: (x: Float64Array) => number,
  n: number,
  seed: number,
  options: Partial<CMAESOptions> = {},
): number | undefined {
  const es = new CMAES({
    x0: new Float64Array(n).fill(3),
    sigma0: 2,
    seed,
    ...options,
    stopping: { ftarget: 1e-8, ...options.stopping },
  });
  runToStop(es, f);
  return es.stopReasons.includes('ftarget') ? es.best!.evaluation : undefined;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Whether C (row-major n × n) is exactly symmetric, and its smallest eigenvalue. */
export function symmetricPositiveDefinite(
  c: Float64Array,
  n: number,
): { symmetric: boolean; min: number } {
  let symmetric = true;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < i; j++) if (c[i * n + j] !== c[j * n + i]) symmetric = false;
  return { symmetric, min: symmetricEigen(c, n).values[0]! };
}

/** f(x) = Σ_i 10^(k·i/(n−1)) (Qx)_i², a rotated ellipsoid; Q from a seeded symmetric matrix. */
export function rotatedEllipsoid(
  n: number,
  logCondition: number,
  salt: number,
): (x: Float64Array) => number {
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const v = Math.sin(salt * 12.9898 + i * 78.233 + j * 37.719) * 43758.5453;
      a[i * n + j] = v - Math.floor(v) - 0.5;
      a[j * n + i] = a[i * n + j]!;
    }
  }
  const q = symmetricEigen(a, n).vectors;
  const scale = Float64Array.from(
    { length: n },
    (_, i) => 10 ** (n === 1 ? 0 : (logCondition * i) / (n - 1)),
  );
  return (x) => {
    let s = 0;
    for (let i = 0; i < n; i++) {
      let t = 0;
      for (let k = 0; k < n; k++) t += q[i * n + k]! * x[k]!;
      s += scale[i]! * t * t;
    }
    return s;
  };
}
