/**
 * Asserts |actual[i] − expected[i]| ≤ atol + rtol·|expected[i]| for every element (and equal
 * lengths); a NaN on either side fails.
 *
 * @throws Error naming the first element out of tolerance.
 */
export function expectClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  rtol = 1e-5,
  atol = 1e-7,
): void {
  if (actual.length !== expected.length) {
    throw new Error(`length ${actual.length} vs expected ${expected.length}`);
  }
  for (let i = 0; i < expected.length; i++) {
    const tolerance = atol + rtol * Math.abs(expected[i]!);
    if (!(Math.abs(actual[i]! - expected[i]!) <= tolerance)) {
      throw new Error(
        `element ${i}: ${actual[i]} vs expected ${expected[i]} (tolerance ${tolerance})`,
      );
    }
  }
}
