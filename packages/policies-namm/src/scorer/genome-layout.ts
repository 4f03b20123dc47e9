import { LetheError } from '@lethe/core';
import { checkScorerSpec, formatScorerSpec, type ScorerSpec } from './scorer-spec';

/**
 * One named parameter block of a scorer's genome: `length` numbers from `offset` on. A matrix
 * has `shape` `[out, in]` and is stored row-major (`W[r][c]` at `offset + r·in + c`); a vector
 * has `shape` `[length]`.
 */
export interface GenomeSlice {
  readonly name: string;
  readonly offset: number;
  readonly length: number;
  readonly shape: readonly number[];
}

/**
 * The layout of a scorer's genome, the one flat vector that CMA-ES evolves and that every layer
 * and head shares; all zeros scores every entry 0, so nothing is evicted. This is the single
 * definition of the layout: the scorers read their weights through it.
 *
 * BAM (F features, hidden H), in this order:
 * `Wq` [H, F], `bq` [H], `Wk` [H, F], `bk` [H], `Wv` [H, F], `bv` [H], `Wo` [2F, H], `bo` [2F],
 * `w` [F], `b` [1] — 3(HF + H) + 2FH + 2F + F + 1 numbers (4,172 for F = 25, H = 32; 2,124 for
 * H = 16, the paper's "just over four thousand" being the former).
 *
 * MLP (F features, depth D), in this order:
 * `W1` [F, F], `b1` [F], …, `WD` [F, F], `bD` [F], `w` [F], `b` [1] — D(F² + F) + F + 1
 * numbers (1,326 for F = 25, D = 2).
 *
 * @throws LetheError `E_ARG` for a bad spec (see {@link checkScorerSpec}).
 */
export function describeGenome(spec: ScorerSpec): GenomeSlice[] {
  checkScorerSpec(spec);
  const f = spec.features;
  const blocks: [string, number[]][] = [];
  if (spec.kind === 'bam') {
    const h = spec.hidden;
    for (const p of ['q', 'k', 'v']) blocks.push([`W${p}`, [h, f]], [`b${p}`, [h]]);
    blocks.push(['Wo', [2 * f, h]], ['bo', [2 * f]]);
  } else {
    for (let l = 1; l <= spec.depth; l++) blocks.push([`W${l}`, [f, f]], [`b${l}`, [f]]);
  }
  blocks.push(['w', [f]], ['b', [1]]);
  const slices: GenomeSlice[] = [];
  let offset = 0;
  for (const [name, shape] of blocks) {
    const length = shape.reduce((a, b) => a * b, 1);
    slices.push({ name, offset, length, shape });
    offset += length;
  }
  return slices;
}

/**
 * The number of parameters in a scorer's genome (see {@link describeGenome} for the layout).
 *
 * @throws LetheError `E_ARG` for a bad spec (see {@link checkScorerSpec}).
 */
export function scorerParameterCount(spec: ScorerSpec): number {
  const slices = describeGenome(spec);
  const last = slices[slices.length - 1]!;
  return last.offset + last.length;
}

/**
 * Checks a genome against a spec and copies it into float64 blocks keyed by slice name, so the
 * scorer no longer depends on the caller's buffer.
 *
 * @throws LetheError `E_ARG` for a bad spec (see {@link checkScorerSpec}); `E_ARG` naming
 *   `genome` when its length is not {@link scorerParameterCount} or an element is NaN or ±∞
 *   (the message gives the first bad index).
 */
export function unpackGenome(
  spec: ScorerSpec,
  genome: Float64Array | Float32Array,
): Record<string, Float64Array> {
  const slices = describeGenome(spec);
  const expected = scorerParameterCount(spec);
  if (genome.length !== expected) {
    throw new LetheError(
      'E_ARG',
      `expected ${expected} parameters for ${formatScorerSpec(spec)}, got ${genome.length}`,
      'genome',
    );
  }
  const copy = Float64Array.from(genome);
  for (let i = 0; i < expected; i++) {
    if (!Number.isFinite(copy[i]!)) {
      throw new LetheError('E_ARG', `non-finite value ${copy[i]} at index ${i}`, 'genome');
    }
  }
  const blocks: Record<string, Float64Array> = {};
  for (const s of slices) blocks[s.name] = copy.subarray(s.offset, s.offset + s.length);
  return blocks;
}
