import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PolicySnapshot, packSnapshot, SnapshotCache } from '../src/index';

beforeAll(async () => {
  await initBackend('wasm');
});

async function snapshotOf(values: number[], version: number): Promise<PolicySnapshot> {
  const w = tf.tensor1d(values);
  const snapshot = await packSnapshot(new Map([['w', w]]), version);
  w.dispose();
  return snapshot;
}

describe('SnapshotCache', () => {
  it('loads once per version and disposes the value it replaces before loading the next', async () => {
    const events: string[] = [];
    const cache = new SnapshotCache<string>({
      dispose: (value) => events.push(`dispose ${value}`),
    });
    const load = (label: string) => (arrays: Map<string, Float32Array>) => {
      events.push(`load ${label} [${Array.from(arrays.get('w')!)}]`);
      return label;
    };
    const v1 = await snapshotOf([1, 2], 1);
    const v1Again = await snapshotOf([1, 2], 1);
    const v2 = await snapshotOf([3, 4], 2);
    expect(cache.version).toBeUndefined();
    expect(cache.get(v1, load('a'))).toBe('a');
    expect(cache.get(v1, load('b'))).toBe('a');
    // Known by version alone: another buffer with the same version is the same weights.
    expect(cache.get(v1Again, load('c'))).toBe('a');
    expect(cache.version).toBe(1);
    expect(cache.get(v2, load('d'))).toBe('d');
    expect(cache.version).toBe(2);
    expect(cache.get(v1, load('e'))).toBe('e');
    expect(events).toEqual([
      'load a [1,2]',
      'dispose a',
      'load d [3,4]',
      'dispose d',
      'load e [1,2]',
    ]);
    cache.clear();
    expect(events.at(-1)).toBe('dispose e');
    expect(cache.version).toBeUndefined();
    cache.clear();
    expect(events).toHaveLength(6);
  });

  it('is left empty when load throws, and loads again on the next get', async () => {
    const disposed: number[] = [];
    const cache = new SnapshotCache<number>({ dispose: (value) => disposed.push(value) });
    const v1 = await snapshotOf([1], 1);
    const v2 = await snapshotOf([2], 2);
    cache.get(v1, () => 1);
    expect(() =>
      cache.get(v2, () => {
        throw new Error('load failed');
      }),
    ).toThrow('load failed');
    expect(disposed).toEqual([1]);
    expect(cache.version).toBeUndefined();
    expect(cache.get(v2, () => 2)).toBe(2);
  });

  it('holds one set of tensors at a time (no leaks across versions)', async () => {
    const cache = new SnapshotCache<tf.Tensor>({ dispose: (t) => t.dispose() });
    const before = tf.memory().numTensors;
    for (let version = 0; version < 5; version++) {
      const snapshot = await snapshotOf([version, version + 1], version);
      for (let i = 0; i < 3; i++) {
        const w = cache.get(snapshot, (arrays) => tf.tensor(arrays.get('w')!));
        expect(Array.from(w.dataSync())).toEqual([version, version + 1]);
      }
      expect(tf.memory().numTensors).toBe(before + 1);
    }
    cache.clear();
    expect(tf.memory().numTensors).toBe(before);
  });
});
