import type { AnyPolicyProvider, PolicyModelShape, PreparedPolicy } from '@lethe/kv-cache';
import { policyContextOf } from '../runtime/policy-context';
import { COMPARED_ALONE, expectBatchIsolation } from './batch-isolation';
import { computeGenerateLoop, controlsLoop } from './compute-loops';
import { GENERATE_CAPACITY, generateLoop } from './generate-loop';
import { kvCacheLoop, kvCacheLoopContext } from './kv-cache-loop';
import { expectSame, expectThat } from './matrix-failure';
import { matrixModel } from './matrix-model';
import { accepts, MATRIX_MODES, type MatrixMode, modeBudget, providerKind } from './matrix-modes';
import { type PolicyFixture, prepareInMode } from './policy-fixture';
import { expectSparseReads, readCacheLoop, readGenerateLoop } from './read-loops';

/** Capacity of the KVCache loop (60 tokens). */
const LOOP_CAPACITY = 12;
const LOOP_TOKENS = 60;

/** Options of {@link policyMatrixCases}. */
export interface PolicyMatrixOptions {
  /** The test directory of a learned provider (required for one; see {@link PolicyFixture}). */
  readonly fixture?: PolicyFixture;
  /** The modes to try (default {@link MATRIX_MODES}); the provider runs those it accepts. */
  readonly modes?: readonly MatrixMode[];
}

/** One run of the policy matrix: a provider in a mode on one loop. */
export interface PolicyMatrixCase {
  /** `"<provider> × <mode> × <loop>"`. */
  readonly name: string;
  readonly provider: string;
  readonly mode: string;
  readonly loop: 'KVCache loop' | 'controls loop' | 'generate()';
  /**
   * Runs the case on the current tfjs backend. @throws PolicyMatrixFailure naming the broken
   * promise.
   */
  run(): Promise<void>;
}

/**
 * The shared test matrix for one provider (kvpress's `tests/default_presses.py`, stronger): every
 * mode whose options the provider's schema has and whose budget form it takes, on two loops.
 * An eviction policy runs the KVCache loop (60 random tokens at capacity 12, rounds after every
 * token) and `generate()` on a tiny random model (two prompts, 24 greedy tokens at capacity 8);
 * each checks, at every token, the budget, the anchors, the decision's indices — and that the
 * same seed gives the same result, that each sequence alone ends as it did in the batch, no
 * tensor is left behind, and the policy did evict. A compute policy runs the controls loop
 * (valid knobs per layer, not all dense) and `generate()` (valid knobs at every step, no
 * eviction, realised averages in [0, 1], one refresh per episode), with the same seeding and
 * isolation checks. A read selector
 * runs the KVCache loop (60 random tokens, the selector asked at every layer of every token as
 * the decode step asks it: valid pages, the newest among them, at most the mode's page budget
 * per KV head — see `modeReadPages`) and `generate()` (every entry kept, no step reading more
 * than the budget allows), with the same seeding and isolation checks, and that it read fewer
 * entries than the cache held somewhere.
 *
 * @example
 * ```ts
 * import { policyMatrixCases } from '@lethe/model/testing';
 * for (const c of policyMatrixCases(myProvider)) test(c.name, () => c.run());
 * ```
 * @throws Error when a learned provider has no `fixture`, or the provider accepts no mode.
 */
export function policyMatrixCases(
  provider: AnyPolicyProvider,
  options: PolicyMatrixOptions = {},
): PolicyMatrixCase[] {
  const modes = (options.modes ?? MATRIX_MODES).filter((mode) => accepts(provider, mode));
  if (modes.length === 0) {
    throw new Error(`provider "${provider.name}" accepts none of the matrix's modes`);
  }
  if (provider.learned !== undefined && options.fixture === undefined) {
    throw new Error(`learned provider "${provider.name}" needs a fixture to run the matrix`);
  }
  const prepare = (mode: MatrixMode, shape: PolicyModelShape): Promise<PreparedPolicy> =>
    prepareInMode(provider, mode, options.fixture, shape);
  const kind = providerKind(provider);
  return modes.flatMap((mode) => {
    const loops =
      kind === 'compute'
        ? ([
            ['controls loop', () => controlsCase(prepare, mode)],
            ['generate()', () => computeGenerateCase(prepare, mode)],
          ] as const)
        : kind === 'read'
          ? ([
              ['KVCache loop', () => readCacheCase(prepare, mode)],
              ['generate()', () => readGenerateCase(prepare, mode)],
            ] as const)
          : ([
              ['KVCache loop', () => kvCacheCase(prepare, mode)],
              ['generate()', () => generateCase(prepare, mode)],
            ] as const);
    return loops.map(([loop, run]) => ({
      name: `${provider.name} × ${mode.name} × ${loop}`,
      provider: provider.name,
      mode: mode.name,
      loop,
      run,
    }));
  });
}

/**
 * Runs every case of {@link policyMatrixCases} in turn.
 *
 * @returns the number of cases run.
 * @throws PolicyMatrixFailure from the first case that breaks a promise.
 */
export async function runPolicyMatrix(
  provider: AnyPolicyProvider,
  options: PolicyMatrixOptions = {},
): Promise<number> {
  const cases = policyMatrixCases(provider, options);
  for (const c of cases) await c.run();
  return cases.length;
}

type Prepare = (mode: MatrixMode, shape: PolicyModelShape) => Promise<PreparedPolicy>;

async function kvCacheCase(prepare: Prepare, mode: MatrixMode): Promise<void> {
  const prepared = await prepare(mode, kvCacheLoopContext(1).model);
  try {
    const build = (sequences: number) => {
      const set = prepared.build(modeBudget(mode, LOOP_CAPACITY), kvCacheLoopContext(sequences));
      expectThat(
        set.eviction !== undefined,
        'builds an eviction policy',
        'KVCache loop',
        () => 'none',
      );
      return set.eviction;
    };
    const run = (sequences: number, seeds: number[]) =>
      kvCacheLoop(build(sequences), seeds, LOOP_TOKENS, LOOP_CAPACITY, mode);
    const batch = run(2, [11, 12]);
    expectSame(run(2, [11, 12]), batch, 'same seed, same result', 'KVCache loop');
    expectSame(
      run(1, [11]),
      [batch[0]],
      'a sequence alone ends as in the batch',
      'KVCache loop, sequence 0',
    );
    expectSame(
      run(1, [12]),
      [batch[1]],
      'a sequence alone ends as in the batch',
      'KVCache loop, sequence 1',
    );
    const held = batch[0]!.flat().map((live) => live.length);
    expectThat(
      held.every((n) => n < LOOP_TOKENS),
      'evicts',
      'KVCache loop',
      () => `heads hold [${held}] of ${LOOP_TOKENS} tokens`,
    );
  } finally {
    prepared.release();
  }
}

async function generateCase(prepare: Prepare, mode: MatrixMode): Promise<void> {
  const model = matrixModel();
  const prepared = await prepare(mode, policyContextOf(model, 1).model);
  try {
    await expectBatchIsolation(
      (prompts, ids) => generateLoop(prepared, model, prompts, ids, GENERATE_CAPACITY, mode),
      COMPARED_ALONE.eviction,
    );
  } finally {
    prepared.release();
    model.dispose();
  }
}

async function controlsCase(prepare: Prepare, mode: MatrixMode): Promise<void> {
  const model = matrixModel();
  const shape = policyContextOf(model, 1).model;
  model.dispose();
  const prepared = await prepare(mode, shape);
  try {
    const build = (sequences: number) => {
      const set = prepared.build(modeBudget(mode, 2), { model: shape, sequences });
      expectThat(
        set.compute !== undefined,
        'builds a compute policy',
        'controls loop',
        () => 'none',
      );
      return set.compute;
    };
    const run = (sequences: number, seeds: number[]) =>
      controlsLoop(build(sequences), seeds, 40, shape, 2);
    const batch = run(2, [11, 12]);
    expectSame(run(2, [11, 12]), batch, 'same seed, same result', 'controls loop');
    expectSame(
      run(1, [11]),
      [batch[0]],
      'a sequence alone as in the batch',
      'controls loop, sequence 0',
    );
    expectSame(
      run(1, [12]),
      [batch[1]],
      'a sequence alone as in the batch',
      'controls loop, sequence 1',
    );
    expectThat(
      batch.flat(2).some((layer) => Object.keys(layer).length > 0),
      'asks for less than dense compute somewhere',
      'controls loop',
      () => 'every step of every layer was dense',
    );
  } finally {
    prepared.release();
  }
}

async function computeGenerateCase(prepare: Prepare, mode: MatrixMode): Promise<void> {
  const model = matrixModel();
  const prepared = await prepare(mode, policyContextOf(model, 1).model);
  try {
    await expectBatchIsolation(
      (prompts, ids) => computeGenerateLoop(prepared, model, prompts, ids, mode),
      COMPARED_ALONE.compute,
    );
  } finally {
    prepared.release();
    model.dispose();
  }
}

async function readCacheCase(prepare: Prepare, mode: MatrixMode): Promise<void> {
  const prepared = await prepare(mode, kvCacheLoopContext(1).model);
  try {
    const build = (sequences: number) => {
      const set = prepared.build(modeBudget(mode, LOOP_CAPACITY), kvCacheLoopContext(sequences));
      expectThat(
        set.readSelector !== undefined,
        'builds a read selector',
        'KVCache loop',
        () => 'none',
      );
      expectThat(
        set.eviction === undefined,
        'a read selector evicts nothing',
        'KVCache loop',
        () => 'it built an eviction policy',
      );
      return set.readSelector;
    };
    const run = (sequences: number, seeds: number[]) =>
      readCacheLoop(build(sequences), seeds, LOOP_TOKENS, mode);
    const batch = run(2, [11, 12]);
    expectSame(run(2, [11, 12]), batch, 'same seed, same result', 'KVCache loop');
    expectSame(
      run(1, [11]),
      [batch[0]],
      'a sequence alone reads as in the batch',
      'KVCache loop, sequence 0',
    );
    expectSame(
      run(1, [12]),
      [batch[1]],
      'a sequence alone reads as in the batch',
      'KVCache loop, sequence 1',
    );
    expectThat(
      batch.every((reads) => reads.skipped > 0),
      'reads fewer pages than the cache holds',
      'KVCache loop',
      () => `heads that left a page out: [${batch.map((reads) => reads.skipped)}]`,
    );
  } finally {
    prepared.release();
  }
}

async function readGenerateCase(prepare: Prepare, mode: MatrixMode): Promise<void> {
  const model = matrixModel();
  const prepared = await prepare(mode, policyContextOf(model, 1).model);
  try {
    const batch = await expectBatchIsolation(
      (prompts, ids) => readGenerateLoop(prepared, model, prompts, ids, mode),
      COMPARED_ALONE.read,
    );
    expectSparseReads(batch, 'generate()');
  } finally {
    prepared.release();
    model.dispose();
  }
}
