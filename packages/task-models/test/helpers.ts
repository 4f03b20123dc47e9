import type { ModelSize } from '../src/model-size';

/** A micro model: trains a handful of steps in well under a second on wasm. */
export const MICRO: ModelSize = { hidden: 16, layers: 2, heads: 2, kvHeads: 1, intermediate: 32 };
