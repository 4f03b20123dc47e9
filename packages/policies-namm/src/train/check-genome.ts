import { LetheError } from '@lethe/core';
import { scorerParameterCount } from '../scorer/genome-layout';
import { formatScorerSpec, type ScorerSpec } from '../scorer/scorer-spec';

/**
 * Checks that `genome` is a genome of `scorer`: `scorerParameterCount(scorer)` finite values.
 *
 * @throws LetheError `E_ARG` naming `argument` (wrong length, or the first non-finite value).
 */
export function checkGenome(genome: ArrayLike<number>, scorer: ScorerSpec, argument: string): void {
  const expected = scorerParameterCount(scorer);
  if (genome.length !== expected) {
    throw new LetheError(
      'E_ARG',
      `has ${genome.length} values; ${formatScorerSpec(scorer)} needs ${expected}`,
      argument,
    );
  }
  for (let i = 0; i < expected; i++) {
    if (!Number.isFinite(genome[i])) {
      throw new LetheError('E_ARG', `value ${i} is ${genome[i]}, must be finite`, argument);
    }
  }
}
