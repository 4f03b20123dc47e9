import { requireNonEmpty, requirePositive, requireSameLength } from './validate';

/**
 * Per-example ratios `numerators[i] / denominators[i]` of two paired, non-empty arrays of
 * positive counts.
 *
 * @throws LetheError `E_ARG` for an empty array or a NaN, infinite, zero or negative entry
 *   (naming `name[i]`); `E_SHAPE` when the lengths differ.
 */
export function pairedRatios(
  numerators: readonly number[],
  numeratorName: string,
  denominators: readonly number[],
  denominatorName: string,
): number[] {
  requireNonEmpty(numerators, numeratorName);
  requireNonEmpty(denominators, denominatorName);
  requireSameLength(numerators, numeratorName, denominators, denominatorName);
  return numerators.map(
    (numerator, i) =>
      requirePositive(numerator, `${numeratorName}[${i}]`) /
      requirePositive(denominators[i]!, `${denominatorName}[${i}]`),
  );
}
