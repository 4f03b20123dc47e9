import fc from 'fast-check';

/** Seeds as fast-check generates them (non-negative safe integers, small and large). */
export const seedArb = fc.oneof(
  fc.integer({ min: 0, max: 1000 }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);

/** Example indices. */
export const indexArb = fc.integer({ min: 0, max: 1_000_000 });
