/**
 * `ReadSelector` and Quest's page bound (`pageKeyBounds`, `pageUpperBounds`, `QuestGroupReduce`)
 * are defined in `@lethe/kv-cache` (with the rest of the policy API and the bounds a cache
 * maintains) and re-exported here.
 */
export {
  type PageKeyBounds,
  pageKeyBounds,
  pageUpperBounds,
  type QuestGroupReduce,
  type ReadSelector,
} from '@lethe/kv-cache';
export * from './h2o';
export * from './keydiff';
export * from './knorm';
export * from './l2-norm';
export * from './providers';
export * from './quest';
export * from './quest-provider';
export * from './random';
export * from './scorer-provider';
export * from './snapkv';
export * from './streaming-llm';
export * from './tova';
