/** A fraction as the report writes it: a percentage with one decimal, `0.5` → `50.0%`. */
export function percent(fraction: number): string {
  return `${(100 * fraction).toFixed(1)}%`;
}
