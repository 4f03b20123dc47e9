import type { SafetensorsDtype, SafetensorsFile } from '@lethe/core';
import { LetheError } from '@lethe/core';
import { checkObject, kindOf } from '../option-checks';
import { checkpointLayout } from './checkpoint-layout';
import type { ModelConfig } from './model-config';

/** Dtypes a checkpoint tensor may be stored in (all are read as float32). */
export const CHECKPOINT_DTYPES: readonly SafetensorsDtype[] = ['F32', 'F16', 'BF16', 'F64'];

/** One way a set of tensors differs from what a config expects. */
export interface CheckpointProblem {
  /** The tensor at fault. */
  tensor: string;
  /** What is wrong with it. */
  message: string;
}

/**
 * Checks that a parsed safetensors file holds exactly the tensors of `config`'s
 * {@link checkpointLayout}: none missing, none extra, every shape as expected and every
 * dtype one of {@link CHECKPOINT_DTYPES}.
 *
 * @throws LetheError `E_CHECKPOINT` listing every problem found; `argument` names the
 *   tensor of the first one. `E_ARG` if `config` itself is invalid.
 */
export function validateCheckpoint(file: SafetensorsFile, config: ModelConfig): void {
  throwCheckpointProblems(
    collectCheckpointProblems(file.tensors, config, (tensor) =>
      CHECKPOINT_DTYPES.includes(tensor.dtype)
        ? undefined
        : `dtype ${tensor.dtype}, expected one of ${CHECKPOINT_DTYPES.join('/')}`,
    ),
  );
}

/**
 * Compares a set of tensors with `config`'s layout. Problems come in layout order (missing, not
 * an object, mis-shaped, or rejected by `checkTensor`, which returns a message or `undefined`),
 * then extra tensors in name order.
 *
 * @throws LetheError `E_ARG` naming `tensors` when it is not an object.
 */
export function collectCheckpointProblems<T extends { shape: readonly number[] }>(
  tensors: Record<string, T>,
  config: ModelConfig,
  checkTensor: (tensor: T) => string | undefined,
): CheckpointProblem[] {
  checkObject(tensors, 'tensors', 'an object of named tensors');
  const problems: CheckpointProblem[] = [];
  const layout = checkpointLayout(config);
  for (const { name, shape } of layout) {
    if (!Object.hasOwn(tensors, name)) {
      problems.push({ tensor: name, message: 'missing' });
      continue;
    }
    const tensor = tensors[name] as T | null;
    if (typeof tensor !== 'object' || tensor === null) {
      problems.push({ tensor: name, message: `must be a tensor, got ${kindOf(tensor)}` });
      continue;
    }
    if (!sameShape(tensor.shape, shape)) {
      problems.push({
        tensor: name,
        message: `shape ${JSON.stringify(tensor.shape)}, expected ${JSON.stringify(shape)}`,
      });
    }
    const message = checkTensor(tensor);
    if (message !== undefined) problems.push({ tensor: name, message });
  }
  const expected = new Set(layout.map((spec) => spec.name));
  const extra = Object.keys(tensors)
    .filter((name) => !expected.has(name))
    .sort();
  for (const name of extra) {
    problems.push({ tensor: name, message: `unexpected for ${config.model_type} config` });
  }
  return problems;
}

/** Throws one `E_CHECKPOINT` error describing all `problems` (none: returns). */
export function throwCheckpointProblems(problems: CheckpointProblem[]): void {
  if (problems.length === 0) return;
  const list = problems.map((p) => `${p.tensor}: ${p.message}`).join('; ');
  throw new LetheError(
    'E_CHECKPOINT',
    `checkpoint does not match the config (${problems.length} problem${problems.length > 1 ? 's' : ''}): ${list}`,
    problems[0]!.tensor,
  );
}

function sameShape(actual: readonly number[], expected: readonly number[]): boolean {
  return (
    Array.isArray(actual) &&
    actual.length === expected.length &&
    actual.every((dim, i) => dim === expected[i])
  );
}
