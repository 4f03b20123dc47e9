import { LetheError, Rng } from '@lethe/core';
import { checkDocument } from './counterfactual-rollout';

/**
 * Where a trainer's documents come from: a list, visited in epochs of a seeded shuffle, or a
 * function giving the document of input `index` (0 … B−1) of update `update` (0-based), which
 * must give the same document for the same arguments for runs to repeat and resume.
 */
export type DocumentSource =
  | readonly Int32Array[]
  | ((update: number, index: number) => Int32Array);

/**
 * The document of every input of every update, from a {@link DocumentSource}: for a list, input
 * `b` of update `u` is document `j = u·B + b` of a sequence of epochs, each a fresh permutation
 * of the list drawn from `new Rng(seed).fork('documents-<epoch>')`. Depends only on
 * `(seed, u, b)`, so a resumed run sees the documents an uninterrupted one would.
 */
export class DocumentSchedule {
  private epoch = -1;
  private order: Int32Array = new Int32Array(0);

  /**
   * @param length the tokens each document needs (`prefix + horizon + 1`).
   * @param vocab the model's vocabulary size.
   * @throws LetheError `E_ARG` naming `documents` when it is neither a non-empty array nor a
   *   function, or `documents[i]` for a listed document that is not an `Int32Array` of at least
   *   `length` ids in `[0, vocab)`.
   */
  constructor(
    private readonly source: DocumentSource,
    private readonly seed: number,
    private readonly batchSize: number,
    private readonly length: number,
    private readonly vocab: number,
  ) {
    if (typeof source === 'function') return;
    if (!Array.isArray(source) || source.length === 0) {
      throw new LetheError(
        'E_ARG',
        'must be a non-empty array of Int32Array documents or a function (update, index) => Int32Array',
        'documents',
      );
    }
    source.forEach((document, i) => {
      checkDocument(document, length, vocab, `documents[${i}]`);
    });
  }

  /**
   * The document of input `index` of update `update`.
   *
   * @throws LetheError `E_ARG` naming `documents(update, index)` when a function source returns
   *   something that is not an `Int32Array` of at least `length` ids in the vocabulary.
   */
  document(update: number, index: number): Int32Array {
    const { source } = this;
    if (typeof source === 'function') {
      const document = source(update, index);
      checkDocument(document, this.length, this.vocab, `documents(${update}, ${index})`);
      return document;
    }
    const j = update * this.batchSize + index;
    const epoch = Math.floor(j / source.length);
    if (epoch !== this.epoch) {
      this.order = permutation(source.length, new Rng(this.seed).fork(`documents-${epoch}`));
      this.epoch = epoch;
    }
    return source[this.order[j % source.length]!]!;
  }
}

/** A uniform permutation of `0 … n−1` (Fisher–Yates with `n` uniforms of `rng`). */
function permutation(n: number, rng: Rng): Int32Array {
  const order = Int32Array.from({ length: n }, (_, i) => i);
  const uniforms = rng.uniform(n);
  for (let i = n - 1; i > 0; i--) {
    const k = Math.min(Math.floor(uniforms[i]! * (i + 1)), i);
    const swap = order[i]!;
    order[i] = order[k]!;
    order[k] = swap;
  }
  return order;
}
