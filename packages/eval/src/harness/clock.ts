/**
 * A monotonic clock in milliseconds. Every wall-time field of a sweep (`elapsedMs`,
 * `tokensPerSecond`, the progress ETA) is read from one, so tests can inject a deterministic
 * clock and compare results files byte for byte.
 */
export type Clock = () => number;

/** The default clock: `performance.now()`. */
export const systemClock: Clock = () => performance.now();
