import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend';
import { OP_SUITE, runSuite } from './op-suite';

describe('cross-backend op suite (wasm vs cpu)', () => {
  let wasm: Map<string, Float32Array>;
  let cpu: Map<string, Float32Array>;
  beforeAll(async () => {
    cpu = await runSuite('cpu');
    wasm = await runSuite('wasm');
  });
  afterAll(async () => {
    await initBackend('wasm');
  });

  it.each(OP_SUITE.map((op) => op.name))('%s agrees to 1e-5', (name) => {
    const a = wasm.get(name)!;
    const b = cpu.get(name)!;
    expect(a.length).toBe(b.length);
    for (let i = 0; i < a.length; i++)
      expect(Math.abs(a[i]! - b[i]!)).toBeLessThan(1e-5 * (1 + Math.abs(b[i]!)));
  });

  it('wasm can differentiate through gather (UnsortedSegmentSum registered)', () => {
    const g = wasm.get('grad of gather (embedding)')!;
    // Row 3 appears twice, so its gradient is 2·(2·w[3]) — nonzero; untouched rows are zero.
    expect(g.slice(0, 4).every((x) => x === 0)).toBe(true);
    expect(g.slice(12, 16).some((x) => x !== 0)).toBe(true);
  });
});

describe('initBackend', () => {
  it('rejects unknown backends with E_ARG naming the argument', async () => {
    await expect(initBackend('tpu' as never)).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'name',
    });
  });
});
