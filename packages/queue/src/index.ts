/**
 * What a queued run's coordinator and workers share and that runs anywhere: the Redis URL, the
 * names of queues and jobs, the shape of a job and of a run's requirements. The coordinator and
 * the worker themselves are Node-only: `@lethe/queue/node`.
 *
 * @packageDocumentation
 */
export { jobIdOf, QUEUE_PREFIX, type QueueJobData, queueName } from './queue-job';
export { decodeQueueValue, encodeQueueValue } from './queue-json';
export { connectionOptions, parseRedisUrl, type RedisAddress, redisLabel } from './redis-url';
export { countsAsComputing, type RunRequirements } from './requirements';
