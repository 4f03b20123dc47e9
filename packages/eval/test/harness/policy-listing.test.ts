import { createDefaultRegistry } from '@lethe/policies';
import { describe, expect, it } from 'vitest';
import { listPolicies } from '../../src/index';

describe('listPolicies', () => {
  const listings = listPolicies(createDefaultRegistry());
  const byName = new Map(listings.map((listing) => [listing.name, listing]));

  it('lists every provider with its budget forms and options', () => {
    expect(listings.map((listing) => listing.name)).toEqual(
      createDefaultRegistry()
        .list()
        .map((provider) => provider.name),
    );
    expect(byName.get('h2o')).toMatchObject({ learned: false, budgetForms: ['capacity', 'rate'] });
    expect(byName.get('sol')).toMatchObject({ learned: true, budgetForms: ['compute'] });
    const window = byName.get('streaming-llm')!.options.find((option) => option.name === 'window');
    expect(window?.description).toBeTypeOf('string');
  });
});
