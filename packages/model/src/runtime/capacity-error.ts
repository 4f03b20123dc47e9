import { LetheError } from '@lethe/core';

/**
 * A request refused because the service is full: every sequence slot is taken and the waiting
 * queue too (`E_CAPACITY`, naming `request`). An HTTP server answers it with 429 and a
 * `Retry-After` header of {@link CapacityError.retryAfterSeconds}. Its `name` stays `LetheError`
 * (what code that tells Lethe's errors apart by name looks for); `instanceof CapacityError` or the
 * code identify it.
 */
export class CapacityError extends LetheError {
  /**
   * Suggested wait before retrying, in whole seconds (≥ 1): an estimate of when a slot frees up,
   * from the recent time per step and the fewest steps a running sequence still needs.
   */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super('E_CAPACITY', message, 'request');
    this.name = 'LetheError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
