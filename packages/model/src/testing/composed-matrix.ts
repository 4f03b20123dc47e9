import {
  type AnyPolicyProvider,
  COMPOSITION_SEPARATOR,
  composePolicies,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import { policyContextOf } from '../runtime/policy-context';
import { COMPARED_ALONE, expectBatchIsolation } from './batch-isolation';
import { type ComposedOutcome, composedGenerateLoop } from './composed-loop';
import { expectSparseCompute } from './compute-loops';
import { expectEvicted } from './generate-loop';
import { matrixModel, matrixPrompts } from './matrix-model';
import {
  accepts,
  MATRIX_MODES,
  type MatrixMode,
  modeKind,
  type ProviderKind,
  providerKind,
} from './matrix-modes';
import { type PolicyFixture, prepareInMode } from './policy-fixture';
import type { PolicyMatrixCase } from './policy-matrix';
import { expectSparseReads } from './read-loops';

/** One part of a composition run by {@link composedMatrixCases}. */
export interface ComposedMatrixPart {
  /** What the part builds: an eviction policy, a compute policy or a read selector. */
  readonly provider: AnyPolicyProvider;
  /** The test directory of a learned provider (required for one; see {@link PolicyFixture}). */
  readonly fixture?: PolicyFixture;
  /**
   * The modes to run the part in (default: its kind's in {@link COMPOSED_DEFAULT_MODES}); it
   * runs those it accepts, one case per combination of the parts' modes.
   */
  readonly modes?: readonly MatrixMode[];
}

/**
 * The mode a part runs in by default, by what it builds: an eviction policy its defaults, a
 * compute policy its defaults without the KV refresh (a refreshing compute policy cannot run
 * beside an eviction policy or a read selector), a read selector Quest's read mode.
 */
export const COMPOSED_DEFAULT_MODES: Readonly<Record<ProviderKind, string>> = {
  eviction: 'defaults',
  compute: 'compute-no-refresh',
  read: 'read-defaults',
};

/**
 * The composed policy matrix (kvpress's `ComposedPress` tests): each composition of `parts` —
 * prepared with `composePolicies`, one mode per part, every combination of the parts' modes —
 * runs `generate()` on the matrix's tiny model, each part under its own budget form (an eviction
 * part at capacity 8, a compute part at its compute targets, a read part at its read budget).
 * Every part is checked as its own matrix checks it, at every step of the same run (see
 * `composedGenerateLoop`), and the case checks that the same seed gives the same result, each
 * sequence alone ends as in the batch (its tokens and what each part records), and every part
 * acted: the eviction part evicted in every sequence, the compute part asked for less than dense
 * compute somewhere, the read part read fewer entries than the cache held in every sequence.
 * Cases are named `"<a>+<b> × <mode of a>+<mode of b> × generate()"`.
 *
 * @example
 * ```ts
 * import { composedMatrixCases } from '@lethe/model/testing';
 * const cases = composedMatrixCases([{ provider: h2oProvider }, { provider: solFixedProvider }]);
 * for (const c of cases) test(c.name, () => c.run()); // "h2o+sol-fixed × defaults+compute-no-refresh × generate()"
 * ```
 * @throws Error when `parts` is empty, a learned part has no `fixture`, or a part accepts none of
 *   its modes.
 */
export function composedMatrixCases(parts: readonly ComposedMatrixPart[]): PolicyMatrixCase[] {
  if (parts.length === 0) throw new Error('a composition needs at least one part');
  const choices = parts.map(partModes);
  const combinations = choices.reduce<MatrixMode[][]>(
    (combos, modes) => combos.flatMap((combo) => modes.map((mode) => [...combo, mode])),
    [[]],
  );
  const provider = parts.map((part) => part.provider.name).join(COMPOSITION_SEPARATOR);
  return combinations.map((modes) => {
    const mode = modes.map((m) => m.name).join(COMPOSITION_SEPARATOR);
    return {
      name: `${provider} × ${mode} × generate()`,
      provider,
      mode,
      loop: 'generate()',
      run: () => composedCase(parts, modes),
    };
  });
}

/**
 * Runs every case of {@link composedMatrixCases} in turn.
 *
 * @returns the number of cases run.
 * @throws PolicyMatrixFailure from the first case that breaks a promise.
 */
export async function runComposedMatrix(parts: readonly ComposedMatrixPart[]): Promise<number> {
  const cases = composedMatrixCases(parts);
  for (const c of cases) await c.run();
  return cases.length;
}

/** The modes `part` runs in: those it accepts of its own or its kind's default. */
function partModes(part: ComposedMatrixPart): MatrixMode[] {
  const { provider } = part;
  if (provider.learned !== undefined && part.fixture === undefined) {
    throw new Error(`learned provider "${provider.name}" needs a fixture to run the matrix`);
  }
  const fallback = COMPOSED_DEFAULT_MODES[providerKind(provider)];
  const modes = (part.modes ?? MATRIX_MODES.filter((m) => m.name === fallback)).filter((mode) =>
    accepts(provider, mode),
  );
  if (modes.length === 0) {
    throw new Error(`provider "${provider.name}" accepts none of its composed matrix modes`);
  }
  return modes;
}

/** Checks that every part of a composition run in `modes` acted (see {@link composedMatrixCases}). */
function expectEveryPartActed(outcome: ComposedOutcome, modes: readonly MatrixMode[]): void {
  const where = 'generate()';
  for (const mode of modes) {
    const kind = modeKind(mode);
    if (kind === 'eviction') {
      expectEvicted(
        { tokens: outcome.tokens, positions: outcome.positions! },
        matrixPrompts(),
        where,
      );
    } else if (kind === 'compute') {
      expectSparseCompute({ usage: outcome.usage! }, where);
    } else {
      expectSparseReads({ reads: outcome.reads!, live: outcome.live! }, where);
    }
  }
}

async function composedCase(
  parts: readonly ComposedMatrixPart[],
  modes: readonly MatrixMode[],
): Promise<void> {
  const model = matrixModel();
  const shape = policyContextOf(model, 1).model;
  const prepared: PreparedPolicy[] = [];
  try {
    for (const [i, part] of parts.entries()) {
      prepared.push(await prepareInMode(part.provider, modes[i]!, part.fixture, shape));
    }
    const composed = composePolicies(prepared);
    const compared = Object.assign({}, ...modes.map((mode) => COMPARED_ALONE[modeKind(mode)]));
    const batch = await expectBatchIsolation(
      (prompts, ids) => composedGenerateLoop(composed, modes, model, prompts, ids),
      compared,
    );
    expectEveryPartActed(batch, modes);
  } finally {
    for (const part of prepared) part.release();
    model.dispose();
  }
}
