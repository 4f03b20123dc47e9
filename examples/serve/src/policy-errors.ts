import { LetheError } from '@lethe/core';
import { invalidRequest, plainMessage } from './api-error';

/** The request fields a policy's errors land in: a single policy's, or a composition part's. */
export interface PolicyFields {
  /** Where its options are: `lethe.options`, or `lethe.options.<part>` for a part. */
  readonly options: string;
  /** Where its budget is: `lethe.budget`, or `lethe.budget.<part>` for a part given its own. */
  readonly budget: string;
  /** The part's name, said in a message whose field does not name it; absent for one policy. */
  readonly part?: string;
}

/** The fields of a single policy. */
export const SINGLE_POLICY: PolicyFields = { options: 'lethe.options', budget: 'lethe.budget' };

/**
 * A registry error about the request, renamed into the request's fields: the policy's name →
 * `lethe.policy`, one of its options → `<options>.<key>`, anything about the budget — a
 * malformed one, or one too small for the policy's anchors — → the budget's field; the message
 * without the library's code and argument (a part's name before it where the field does not say
 * it), the code `invalid_value`. Anything else is returned unchanged.
 */
export function renamed(error: unknown, fields: PolicyFields = SINGLE_POLICY): unknown {
  if (!(error instanceof LetheError)) return error;
  const argument = error.argument ?? '';
  const field =
    argument === 'policy' || argument === 'name'
      ? 'lethe.policy'
      : argument.startsWith('options')
        ? `${fields.options}${argument.slice('options'.length)}`
        : fields.budget;
  const unnamed = field === 'lethe.policy' || field === SINGLE_POLICY.budget;
  const part = fields.part !== undefined && unnamed ? `(${fields.part}) ` : '';
  return invalidRequest(field, `${field}: ${part}${plainMessage(error)}`);
}
