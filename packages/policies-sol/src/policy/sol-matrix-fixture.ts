import type { PolicyDirectoryContents, PolicyModelShape } from '@lethe/kv-cache';
import { ACTION_PRESETS } from '../actions/action-presets';
import { ActionSet } from '../actions/action-set';
import { controllerConfig } from '../controller/controller-config';
import { initControllerParameters } from '../controller/controller-parameters';
import { solPolicyContents } from './sol-policy-contents';

/**
 * SOL's test directory for the shared policy matrix (`policyMatrixCases` of
 * `@lethe/model/testing`): a controller for `shape` over the 2L action set with seeded weights,
 * its policy head scaled up so that actions differ between steps (a fresh controller's policy is
 * near uniform), a width of 16 to keep the matrix fast, and a horizon of 8.
 */
export function solMatrixFixture(shape: PolicyModelShape): PolicyDirectoryContents {
  const actions = new ActionSet(ACTION_PRESETS['2L']);
  const config = controllerConfig({
    inputSize: shape.hiddenSize,
    actions: actions.size,
    width: 16,
    maxHorizon: 16,
  });
  const parameters = initControllerParameters(config, { seed: 4 });
  const head = parameters.tensors['policy_head.weight'];
  for (let i = 0; i < head.length; i++) head[i]! *= 300;
  return solPolicyContents(
    {
      parameters,
      actions,
      baseModel: { hiddenSize: shape.hiddenSize, vocabSize: shape.vocabSize ?? 1 },
    },
    { options: { horizon: 8 } },
  );
}
