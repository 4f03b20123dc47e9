import * as core from '@lethe/core';
import * as kvCache from '@lethe/kv-cache';
import { runReadmeExample } from '@lethe/test-utils';
import { expect, it } from 'vitest';
import * as api from '../src/index';

it('the README example runs as printed', () => {
  const { printed } = runReadmeExample(new URL('../README.md', import.meta.url), {
    '@lethe/core': core,
    '@lethe/kv-cache': kvCache,
    '@lethe/policies-namm': api,
  });
  expect(printed).toEqual(['1,1']);
});
