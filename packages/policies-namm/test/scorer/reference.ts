/**
 * Naive float64 references for the NAMM scorers, written straight from the equations with plain
 * number arrays and their own reading of the genome layout; they share no code with src.
 */

/** Reads the genome front to back: matrices [rows][cols] row-major, then vectors. */
class GenomeReader {
  private offset = 0;
  constructor(private readonly genome: ArrayLike<number>) {}

  matrix(rows: number, cols: number): number[][] {
    return Array.from({ length: rows }, () => this.vector(cols));
  }

  vector(length: number): number[] {
    const v = Array.from({ length }, (_, i) => this.genome[this.offset + i]!);
    this.offset += length;
    return v;
  }

  /** Throws unless every number was read. */
  done(): void {
    if (this.offset !== this.genome.length) {
      throw new Error(`read ${this.offset} of ${this.genome.length} parameters`);
    }
  }
}

function rowsOf(x: ArrayLike<number>, n: number, f: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: f }, (_, c) => x[i * f + c]!));
}

function dot(a: number[], b: number[]): number {
  return a.reduce((s, ai, i) => s + ai * b[i]!, 0);
}

function affine(w: number[][], b: number[], v: number[]): number[] {
  return w.map((row, r) => b[r]! + dot(row, v));
}

/** BAM scores of n entries x ([n, f] row-major) with hidden width h. */
export function referenceBam(
  genome: ArrayLike<number>,
  f: number,
  h: number,
  x: ArrayLike<number>,
  n: number,
): number[] {
  const r = new GenomeReader(genome);
  const wq = r.matrix(h, f);
  const bq = r.vector(h);
  const wk = r.matrix(h, f);
  const bk = r.vector(h);
  const wv = r.matrix(h, f);
  const bv = r.vector(h);
  const wo = r.matrix(2 * f, h);
  const bo = r.vector(2 * f);
  const w = r.vector(f);
  const [b] = r.vector(1);
  r.done();
  const xs = rowsOf(x, n, f);
  const q = xs.map((xi) => affine(wq, bq, xi));
  const k = xs.map((xi) => affine(wk, bk, xi));
  const v = xs.map((xi) => affine(wv, bv, xi));
  return xs.map((xi, i) => {
    const logits: number[] = [];
    for (let j = i; j < n; j++) logits.push(dot(q[i]!, k[j]!) / Math.sqrt(h));
    const max = Math.max(...logits);
    const e = logits.map((l) => Math.exp(l - max));
    const z = e.reduce((s, ei) => s + ei, 0);
    const u = new Array<number>(h).fill(0);
    e.forEach((ej, t) => {
      for (let c = 0; c < h; c++) u[c]! += (ej / z) * v[i + t]![c]!;
    });
    const o = affine(wo, bo, u);
    const y = xi.map((xc, c) => xc * (1 + o[f + c]!) + o[c]!);
    return dot(w, y) + b!;
  });
}

/** MLP scores of n entries x ([n, f] row-major) with `depth` residual ReLU layers. */
export function referenceMlp(
  genome: ArrayLike<number>,
  f: number,
  depth: number,
  x: ArrayLike<number>,
  n: number,
): number[] {
  const r = new GenomeReader(genome);
  const layers = Array.from({ length: depth }, () => ({ w: r.matrix(f, f), b: r.vector(f) }));
  const w = r.vector(f);
  const [b] = r.vector(1);
  r.done();
  return rowsOf(x, n, f).map((xi) => {
    let hidden = xi;
    for (const layer of layers) {
      const z = affine(layer.w, layer.b, hidden);
      hidden = hidden.map((hc, c) => hc + Math.max(0, z[c]!));
    }
    return dot(w, hidden) + b!;
  });
}

/** Uniform numbers in [−scale, scale) from a seeded mulberry32 stream. */
export function randomArray<T extends Float32Array | Float64Array>(
  out: T,
  seed: number,
  scale: number,
): T {
  let state = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * 2 - 1) * scale;
  }
  return out;
}
