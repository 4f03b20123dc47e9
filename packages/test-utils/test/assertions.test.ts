import { describe, expect, it } from 'vitest';
import { expectClose, expectLetheError, expectLetheRejection } from '../src/index';

/** Shaped like `@lethe/tensor`'s LetheError (which this package must not depend on). */
class FakeLetheError extends Error {
  override readonly name = 'LetheError';
  constructor(
    readonly code: string,
    message: string,
    readonly argument?: string,
  ) {
    super(message);
  }
}

const throwing = (error: unknown) => () => {
  throw error;
};

describe('expectLetheError', () => {
  it('returns the error when name, code and argument match', () => {
    const error = new FakeLetheError('E_ARG', 'must be ≥ 1', 'steps');
    expect(expectLetheError(throwing(error), 'E_ARG', 'steps')).toBe(error);
    expect(expectLetheError(throwing(error), 'E_ARG')).toBe(error);
  });

  it('fails when nothing is thrown, or another error, code or argument is', () => {
    const error = new FakeLetheError('E_ARG', 'bad', 'steps');
    expect(() => expectLetheError(() => 1, 'E_ARG')).toThrow(/nothing was thrown/);
    expect(() => expectLetheError(throwing(new Error('plain')), 'E_ARG')).toThrow(/LetheError/);
    expect(() => expectLetheError(throwing('a string'), 'E_ARG')).toThrow();
    expect(() => expectLetheError(throwing(error), 'E_STATE')).toThrow(/E_STATE/);
    expect(() => expectLetheError(throwing(error), 'E_ARG', 'lr')).toThrow(/lr/);
  });
});

describe('expectLetheRejection', () => {
  it('returns the rejection when it matches', async () => {
    const error = new FakeLetheError('E_FORMAT', 'not JSON', 'file');
    await expect(expectLetheRejection(Promise.reject(error), 'E_FORMAT', 'file')).resolves.toBe(
      error,
    );
  });

  it('fails for a resolved promise or another code', async () => {
    await expect(expectLetheRejection(Promise.resolve(1), 'E_ARG')).rejects.toThrow(
      /nothing was thrown/,
    );
    const error = new FakeLetheError('E_FORMAT', 'not JSON');
    await expect(expectLetheRejection(Promise.reject(error), 'E_ARG')).rejects.toThrow(/E_ARG/);
  });
});

describe('expectClose', () => {
  it('accepts differences within atol + rtol·|expected|', () => {
    expectClose([1 + 1e-6, -2], [1, -2 - 1e-6], 1e-5, 0);
    expectClose([1e-8], [0]);
  });

  it('fails beyond the tolerance, on NaN and on a length mismatch, naming the element', () => {
    expect(() => expectClose([1, 2.001], [1, 2], 1e-5, 0)).toThrow(/element 1/);
    expect(() => expectClose([Number.NaN], [0])).toThrow(/element 0/);
    expect(() => expectClose([0], [Number.NaN])).toThrow(/element 0/);
    expect(() => expectClose([1, 2], [1])).toThrow(/length 2 vs expected 1/);
  });
});
