import { Rng as HostRng } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend';
import { Rng } from '../src/rng';
import { tf } from '../src/tf';

// The host generator is tested in @lethe/core; these are the tensor draws this package adds.
describe('Rng (tensor draws)', () => {
  beforeAll(async () => {
    await initBackend('cpu');
  });

  it('draws tensors of the shape with the host stream of the same seed', () => {
    const draws = [
      [new Rng(4).uniformTensor([2, 3]), new HostRng(4).uniform(6)],
      [new Rng(4).normalTensor([3, 2], 1, 2), new HostRng(4).normal(6, 1, 2)],
      [new Rng(4).gumbelTensor([6]), new HostRng(4).gumbel(6)],
    ] as const;
    for (const [tensor, host] of draws) {
      expect(tensor.dtype).toBe('float32');
      expect(tensor.size).toBe(6);
      expect(Array.from(tensor.dataSync())).toEqual(Array.from(host));
      tensor.dispose();
    }
    expect(new Rng(4).uniformTensor([2, 3]).shape).toEqual([2, 3]);
  });

  it('fork and fromState give tensor-capable generators', () => {
    const child = new Rng(9).fork('rollout-0');
    expect(child).toBeInstanceOf(Rng);
    const resumed = Rng.fromState(child.state());
    expect(resumed).toBeInstanceOf(Rng);
    tf.tidy(() => {
      expect(Array.from(resumed.normalTensor([4]).dataSync())).toEqual(
        Array.from(child.normalTensor([4]).dataSync()),
      );
    });
  });

  it('rejects bad dimensions with E_SHAPE naming the shape', () => {
    expectLetheError(() => new Rng(1).uniformTensor([2, -1]), 'E_SHAPE', 'shape');
    expectLetheError(() => new Rng(1).normalTensor([1.5]), 'E_SHAPE', 'shape');
  });
});
