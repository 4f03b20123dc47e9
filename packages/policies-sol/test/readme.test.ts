import * as core from '@lethe/core';
import { runReadmeExample } from '@lethe/test-utils';
import { expect, it } from 'vitest';
import * as api from '../src/index';

it('the README example runs as printed', () => {
  const { source, printed } = runReadmeExample(new URL('../README.md', import.meta.url), {
    '@lethe/core': core,
    '@lethe/policies-sol': api,
  });
  const expected = [
    '65897 parameters',
    't=1: action 2 (κ 0.1, ρ 1, q 5), value 0.0097',
    't=2: action 2 (κ 0.1, ρ 1, q 5), value 0.0154',
  ];
  expect(printed).toEqual(expected);
  // the output the README shows under the example is this output
  for (const line of expected) expect(source).toContain(`// ${line}`);
});
