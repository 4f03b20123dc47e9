import { LetheError } from '@lethe/core';
import type { CovarianceModel } from './covariance';
import { DiagonalCovariance } from './diagonal-covariance';
import { FullCovariance } from './full-covariance';
import { decodeCount, decodeFiniteArray, decodeObject } from './json';
import type { CMAESConfig } from './options';

/** How far a saved eigenvector's squared length may lie from 1 (rounding: ~n·10⁻¹⁶). */
const UNIT_LENGTH_TOLERANCE = 1e-6;

/**
 * Decodes and checks the `covariance` of a run's state saved after `generation` generations:
 * what every update of a run keeps true, so that a resumed run cannot fail later on a
 * corrupted value. Diagonal: diag(C) finite and > 0. Full: C finite, exactly symmetric (the
 * update mirrors its upper triangle) with a positive diagonal; B finite with unit rows; the
 * axis lengths D finite and > 0; the last decomposition at a generation ≤ `generation`.
 *
 * @throws LetheError `E_FORMAT` naming `state.covariance.<field>` (or one entry of it).
 */
export function decodeCovariance(
  value: unknown,
  config: CMAESConfig,
  generation: number,
): CovarianceModel {
  const field = 'state.covariance';
  const s = decodeObject(value, field);
  const n = config.dimension;
  const expected = config.diagonal ? 'diagonal' : 'full';
  if (s.kind !== expected) {
    throw new LetheError(
      'E_FORMAT',
      `expected ${expected} (config.diagonal is ${config.diagonal})`,
      `${field}.kind`,
    );
  }
  if (config.diagonal) {
    return DiagonalCovariance.restore(
      n,
      decodeFiniteArray(s.c, `${field}.c`, n, { positive: true }),
    );
  }
  const c = decodeFiniteArray(s.c, `${field}.c`, n * n);
  for (let i = 0; i < n; i++) {
    if (!(c[i * n + i]! > 0)) {
      throw new LetheError(
        'E_FORMAT',
        'a diagonal entry of C must be > 0',
        `${field}.c[${i * n + i}]`,
      );
    }
    for (let j = i + 1; j < n; j++) {
      if (c[i * n + j] !== c[j * n + i]) {
        throw new LetheError(
          'E_FORMAT',
          `C is not symmetric: entries ${i * n + j} and ${j * n + i} differ`,
          `${field}.c`,
        );
      }
    }
  }
  const b = decodeFiniteArray(s.eigenvectors, `${field}.eigenvectors`, n * n);
  for (let j = 0; j < n; j++) {
    let norm = 0;
    for (let k = 0; k < n; k++) norm += b[j * n + k]! ** 2;
    if (!(Math.abs(norm - 1) <= UNIT_LENGTH_TOLERANCE)) {
      throw new LetheError(
        'E_FORMAT',
        `eigenvector ${j} has squared length ${norm}, not 1`,
        `${field}.eigenvectors`,
      );
    }
  }
  const eigenGeneration = decodeCount(s.eigenGeneration, `${field}.eigenGeneration`);
  if (eigenGeneration > generation) {
    throw new LetheError(
      'E_FORMAT',
      `${eigenGeneration} is after the run's generation ${generation}`,
      `${field}.eigenGeneration`,
    );
  }
  return FullCovariance.restore(
    n,
    c,
    b,
    decodeFiniteArray(s.axisLengths, `${field}.axisLengths`, n, { positive: true }),
    eigenGeneration,
  );
}
