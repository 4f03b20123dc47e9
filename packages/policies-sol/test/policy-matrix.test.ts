import { policyMatrixCases } from '@lethe/model/testing';
import { initBackend } from '@lethe/tensor';
import { beforeAll, it } from 'vitest';
import { solMatrixFixture, solProvider } from '../src/index';

// The shared policy matrix (`@lethe/model/testing`) on this package's provider, loaded from its
// own test directory: every mode it accepts, on the KVCache loop and on generate().
beforeAll(() => initBackend('cpu'));

const cases = policyMatrixCases(solProvider, { fixture: solMatrixFixture });
it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => c.run());
