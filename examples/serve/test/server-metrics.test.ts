import { describe, expect, it } from 'vitest';
import { ServerMetrics } from '../src/server-metrics';

function gauge(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{model="m"}`));
  return Number(line?.split(' ')[1]);
}

describe('ServerMetrics', () => {
  it('gives the tokens of the last 10 s per second, and forgets older ones as tokens arrive', async () => {
    let now = 1_000_000;
    const metrics = new ServerMetrics(
      () => new Map([['m', { queued: 2, active: 3, kvEntries: 40, evictions: 5 }]]),
      () => now,
    );
    for (let i = 0; i < 30; i++) metrics.token('m', 10, i === 0);
    now += 4_000;
    for (let i = 0; i < 20; i++) metrics.token('m', 10, false);
    let text = await metrics.text();
    expect(gauge(text, 'lethe_tokens_per_second')).toBe(5);
    expect(gauge(text, 'lethe_generated_tokens_total')).toBe(50);
    expect(gauge(text, 'lethe_queue_depth')).toBe(2);
    expect(gauge(text, 'lethe_kv_entries')).toBe(40);
    now += 8_000; // the first 30 are now older than 10 s
    metrics.token('m', 10, false);
    text = await metrics.text();
    expect(gauge(text, 'lethe_tokens_per_second')).toBe(2.1);
  });
});
