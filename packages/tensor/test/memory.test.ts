import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend';
import { isRecordingGradients, tensorMemoryHeadroom, WASM_HEAP_MAX_BYTES } from '../src/memory';
import { tf } from '../src/tf';

describe('tensorMemoryHeadroom', () => {
  beforeAll(async () => {
    await initBackend('wasm');
  });
  afterAll(async () => {
    await initBackend('wasm');
  });

  it('on wasm, is the heap maximum less what live tensors hold', () => {
    const before = tensorMemoryHeadroom();
    expect(before).toBe(WASM_HEAP_MAX_BYTES - tf.memory().numBytes);
    const x = tf.zeros([1024, 256]);
    expect(tensorMemoryHeadroom()).toBe(before - 1024 * 256 * 4);
    x.dispose();
    expect(tensorMemoryHeadroom()).toBe(before);
  });

  it('is unbounded on cpu', async () => {
    await initBackend('cpu');
    expect(tensorMemoryHeadroom()).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('isRecordingGradients', () => {
  it('is true only while tfjs records a gradient tape', () => {
    expect(isRecordingGradients()).toBe(false);
    let inside = false;
    const x = tf.scalar(3);
    const dx = tf.grad((v: tf.Tensor) => {
      inside = isRecordingGradients();
      return tf.square(v);
    })(x);
    expect(inside).toBe(true);
    expect(isRecordingGradients()).toBe(false);
    tf.dispose([x, dx]);
  });
});
