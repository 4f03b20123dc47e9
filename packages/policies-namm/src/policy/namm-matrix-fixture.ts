import { Rng } from '@lethe/core';
import type { PolicyDirectoryContents } from '@lethe/kv-cache';
import { identityNormalization } from '../features/token-features';
import { scorerParameterCount } from '../scorer/genome-layout';
import { nammPolicyContents } from './namm-policy-contents';

/**
 * NAMM's test directory for the shared policy matrix (`policyMatrixCases` of
 * `@lethe/model/testing`): a BAM scorer (25 features, 8 hidden) with small seeded weights — not
 * the zero genome, which keeps everything — and the identity normalisation. The same for every
 * model shape (NAMM's scorer is shared by every layer and head).
 */
export function nammMatrixFixture(): PolicyDirectoryContents {
  const scorer = { kind: 'bam', features: 25, hidden: 8 } as const;
  const random = new Rng(5);
  return nammPolicyContents({
    scorer,
    features: 'spectrogram',
    genome: Float64Array.from(random.normal(scorerParameterCount(scorer)), (x) => 0.3 * x),
    normalization: identityNormalization(),
  });
}
