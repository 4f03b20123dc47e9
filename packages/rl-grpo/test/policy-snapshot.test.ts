import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PolicySnapshot, packSnapshot, unpackSnapshot } from '../src/index';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('packSnapshot / unpackSnapshot', () => {
  it('round-trips names, shapes, offsets, values and version as views of one buffer', async () => {
    const w = tf.variable(
      tf.tensor2d([
        [1, 2, 3],
        [4, 5, 6],
      ]),
    );
    const b = tf.tensor1d([-0.5, 0.25]);
    const s = tf.scalar(7.5);
    const params = new Map<string, tf.Tensor>([
      ['w', w],
      ['b', b],
      ['s', s],
    ]);
    const before = tf.memory().numTensors;
    const snapshot = await packSnapshot(params, 12);
    expect(tf.memory().numTensors).toBe(before);
    expect(snapshot.version).toBe(12);
    expect(snapshot.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(snapshot.buffer.byteLength).toBe(9 * 4);
    expect(snapshot.layout).toEqual([
      { name: 'w', shape: [2, 3], offset: 0 },
      { name: 'b', shape: [2], offset: 6 },
      { name: 's', shape: [], offset: 8 },
    ]);
    const arrays = unpackSnapshot(snapshot);
    expect([...arrays.keys()]).toEqual(['w', 'b', 's']);
    expect(Array.from(arrays.get('w')!)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(Array.from(arrays.get('b')!)).toEqual([-0.5, 0.25]);
    expect(Array.from(arrays.get('s')!)).toEqual([7.5]);
    // Views, not copies: they alias the (shared) buffer.
    for (const view of arrays.values()) expect(view.buffer).toBe(snapshot.buffer);
    new Float32Array(snapshot.buffer)[6] = 9;
    expect(arrays.get('b')![0]).toBe(9);
    // The parameters are untouched and still owned by the caller.
    expect(Array.from(b.dataSync())).toEqual([-0.5, 0.25]);
    tf.dispose([w, b, s]);
  });

  it('rejects a bad version, no parameters and non-float32 parameters', async () => {
    const w = tf.tensor1d([1, 2]);
    const ids = tf.tensor1d([1, 2], 'int32');
    for (const version of [-1, 1.5, Number.NaN]) {
      await expect(packSnapshot(new Map([['w', w]]), version)).rejects.toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'version' }),
      );
    }
    await expect(packSnapshot(new Map(), 0)).rejects.toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'params' }),
    );
    await expect(
      packSnapshot(
        new Map([
          ['w', w],
          ['ids', ids],
        ]),
        0,
      ),
    ).rejects.toThrowError(expect.objectContaining({ code: 'E_DTYPE', argument: 'ids' }));
    tf.dispose([w, ids]);
  });

  it('rejects a malformed layout, naming the entry', () => {
    const buffer = new ArrayBuffer(4 * 4);
    const cases: [PolicySnapshot['layout'], string][] = [
      [
        [
          { name: 'a', shape: [2], offset: 0 },
          { name: 'a', shape: [2], offset: 2 },
        ],
        'layout[1]',
      ],
      [[{ name: 'a', shape: [5], offset: 0 }], 'layout[0]'],
      [
        [
          { name: 'a', shape: [1], offset: 0 },
          { name: 'b', shape: [2], offset: 3 },
        ],
        'layout[1]',
      ],
      [[{ name: 'a', shape: [2], offset: -1 }], 'layout[0]'],
      [[{ name: 'a', shape: [1.5], offset: 0 }], 'layout[0]'],
    ];
    for (const [layout, argument] of cases) {
      expect(() => unpackSnapshot({ version: 0, buffer, layout })).toThrowError(
        expect.objectContaining({ code: 'E_FORMAT', argument }),
      );
    }
    const whole = unpackSnapshot({
      version: 0,
      buffer,
      layout: [{ name: 'a', shape: [2, 2], offset: 0 }],
    });
    expect(whole.get('a')).toHaveLength(4);
  });
});
