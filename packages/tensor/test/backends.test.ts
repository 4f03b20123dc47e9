import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
  it('auto says once per process that it falls back from WebGPU, and to what', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const first = await initBackend('auto');
      const second = await initBackend('auto');
      expect(second).toBe(first);
      const said = warn.mock.calls.filter(([message]) => /backend auto/.test(String(message)));
      // no GPU here (CI): wasm, said once; a hardware adapter: webgpu, nothing to say
      if (first === 'wasm') {
        expect(said).toHaveLength(1);
        expect(String(said[0]![0])).toMatch(/no hardware WebGPU adapter here; using wasm/);
      } else {
        expect(said).toHaveLength(0);
      }
    } finally {
      warn.mockRestore();
      await initBackend('wasm');
    }
  });

  it('rejects unknown backends with E_ARG naming the argument', async () => {
    await expect(initBackend('tpu' as never)).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'name',
    });
  });
});
