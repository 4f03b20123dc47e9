import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Case, checkCase } from './attention-case';
import { deviceForBlock, skipWebGpu } from './webgpu-setup';

const caseArbitrary: fc.Arbitrary<Case> = fc.record({
  kvHeads: fc.constantFrom(1, 2, 3),
  group: fc.constantFrom(1, 2, 4),
  headDim: fc.constantFrom(4, 8, 16, 32, 64, 128),
  pageSize: fc.constantFrom(1, 4, 16, 64),
  gated: fc.boolean(),
  before: fc.integer({ min: 1, max: 300 }),
  chunk: fc.integer({ min: 1, max: 64 }),
  keep: fc.double({ min: 0, max: 1, noNaN: true }),
  after: fc.integer({ min: 1, max: 40 }),
  truncate: fc.integer({ min: 0, max: 3 }),
  queries: fc.integer({ min: 1, max: 4 }),
  sparse: fc.boolean(),
  biased: fc.boolean(),
  chunked: fc.boolean(),
  spread: fc.constantFrom(0.5, 2, 6),
  seed: fc.integer({ min: 1, max: 2 ** 30 }),
});

describe.skipIf(skipWebGpu)('DeviceKVCache: paged attention on the device (SwiftShader)', () => {
  const block = deviceForBlock();

  it('equals float64 attention over the host cache within the stated bound, on random cases', async () => {
    await fc.assert(
      fc.asyncProperty(caseArbitrary, async (c) => {
        const { worst, live, hostLive } = await checkCase(block.device, c);
        // worst |error| / bound over the outputs: within the bound means ≤ 1
        expect(worst).toBeLessThanOrEqual(1);
        expect(live).toEqual(hostLive);
      }),
      { numRuns: 100, seed: 31 },
    );
  }, 300_000);
});
