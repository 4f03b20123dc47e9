import { runAsyncReadmeExample } from '@lethe/test-utils';
import { skipWithoutRedis, startTestRedis } from '@lethe/test-utils/redis';
import { describe, expect, it } from 'vitest';
import * as queue from '../src/node';

describe.skipIf(skipWithoutRedis('[@lethe/queue] README example'))('the README example', () => {
  it('runs four items on a worker and prints their squares', async () => {
    const redis = await startTestRedis(6390);
    try {
      const { printed } = await runAsyncReadmeExample(new URL('../README.md', import.meta.url), {
        '@lethe/queue/node': queue,
      });
      expect(printed).toEqual(['1 4 9 16']);
    } finally {
      await redis.stop();
    }
  });
});
