import { listPolicies } from '@lethe/eval';
import { createDefaultRegistry } from '@lethe/policies';
import { describe, expect, it } from 'vitest';
import { formatPolicies } from '../src/policies-command';

describe('lethe policies', () => {
  it('prints the budget forms in the text listing', () => {
    const sol = listPolicies(createDefaultRegistry()).find((listing) => listing.name === 'sol')!;
    expect(formatPolicies([sol])).toContain('  budgets: compute\n');
  });
});
