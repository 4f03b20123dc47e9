/** Width of the age (position) features: 4 frequencies, sine and cosine. */
export const AGE_FEATURES = 8;
/** Largest wavelength scale of the age embedding (the reference code's 50,000). */
export const AGE_MAX_PERIOD = 50_000;

const FREQUENCIES = AGE_FEATURES / 2;
const INVERSE_PERIODS = Float64Array.from(
  { length: FREQUENCIES },
  (_, i) => 1 / AGE_MAX_PERIOD ** (i / FREQUENCIES),
);

/**
 * Writes the sinusoidal embedding of a token's age (tokens processed since it entered the cache,
 * the paper's "oldness") to `out[offset …]`: `sin(age·f_0 … age·f_3)` then `cos(age·f_0 … age·f_3)`
 * with `f_i = 50,000^(−i/4)`, the transformer encoding of width {@link AGE_FEATURES}.
 */
export function writeAgeEmbedding(age: number, out: Float32Array, offset: number): void {
  for (let i = 0; i < FREQUENCIES; i++) {
    const angle = age * INVERSE_PERIODS[i]!;
    out[offset + i] = Math.sin(angle);
    out[offset + FREQUENCIES + i] = Math.cos(angle);
  }
}
