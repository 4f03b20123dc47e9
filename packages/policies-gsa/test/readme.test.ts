import * as core from '@lethe/core';
import { runReadmeExample } from '@lethe/test-utils';
import { expect, it } from 'vitest';
import * as api from '../src/index';

it('the README example runs and prints what its comments say', () => {
  const { source, printed } = runReadmeExample(new URL('../README.md', import.meta.url), {
    '@lethe/core': core,
    '@lethe/policies-gsa': api,
  });
  // The printed lines are the `// ` comment lines that follow a console.log in the example.
  const expected = [...source.matchAll(/^\/\/ (token \d: .*|\{.*\})$/gm)].map((m) => m[1]);
  expect(expected).toHaveLength(4);
  expect(printed).toEqual(expected);
});
