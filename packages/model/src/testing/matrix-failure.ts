/**
 * A broken promise of the policy contract found by the policy matrix: `check` says which (e.g.
 * "within budget"), `where` the case, loop and token. Thrown by the matrix's cases so that any
 * test runner reports it as a failure.
 */
export class PolicyMatrixFailure extends Error {
  override readonly name = 'PolicyMatrixFailure';

  constructor(
    readonly check: string,
    readonly where: string,
    detail: string,
  ) {
    super(`${where}: ${check}: ${detail}`);
  }
}

/** Throws {@link PolicyMatrixFailure} unless `condition` holds. */
export function expectThat(
  condition: boolean,
  check: string,
  where: string,
  detail: () => string,
): asserts condition {
  if (!condition) throw new PolicyMatrixFailure(check, where, detail());
}

/**
 * Throws {@link PolicyMatrixFailure} unless `actual` and `expected` (plain data: numbers, arrays,
 * records) are equal, comparing their JSON.
 */
export function expectSame(actual: unknown, expected: unknown, check: string, where: string): void {
  const a = JSON.stringify(actual);
  const b = JSON.stringify(expected);
  expectThat(a === b, check, where, () => `got ${clip(a)}, expected ${clip(b)}`);
}

function clip(text: string | undefined): string {
  if (text === undefined) return 'undefined';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
