import { assertInteger, LetheError } from '@lethe/core';
import type { PolicySet } from '@lethe/kv-cache';
import { type ComputeUsage, type DecoderModel, GenerationSession } from '@lethe/model';
import { requireArray, requireFunction, requireObject } from './arguments';
import type { Clock } from './clock';
import { ReadRecorder, type ReadTrace } from './read-trace';

/** Options of {@link teacherForce}. */
export interface TeacherForceOptions {
  readonly model: DecoderModel;
  /** Documents as token ids (BOS included where the tokenizer has one), each ≥ 2 tokens. */
  readonly documents: readonly Int32Array[];
  /** Random-stream id of each document (eviction streams), independent of batching. */
  readonly streamIds: readonly number[];
  /** Seed of the eviction streams. */
  readonly seed: number;
  /** Eviction policy, read selector and compute policy (none: the full cache). */
  readonly policies: PolicySet;
  /**
   * Tokens of every document prefilled densely before the teacher-forced steps (default 1), as
   * SOL's evaluation does (§5: a dense prefill, then decode episodes); only the tokens after
   * them are scored. Every document needs at least `prefill + 1` tokens.
   */
  readonly prefill?: number;
  readonly clock: Clock;
  /** Checked between steps; an abort rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** One teacher-forced document. */
export interface ScoredDocument extends ReadTrace {
  /** Σ −log p(tokenₜ | cache after tokens < t), nats, over tokens `p … n−1` (`p` the prefill). */
  readonly sumNll: number;
  /** Predicted tokens, `n − p` (`n − 1` with the default prefill). */
  readonly predicted: number;
  /** The compute its decode steps asked for (all 1 without a compute policy). */
  readonly compute: ComputeUsage;
}

/** Output of {@link teacherForce}. */
export interface TeacherForcedBatch {
  readonly documents: ScoredDocument[];
  /** Tokens predicted, over the batch. */
  readonly predictedTokens: number;
  /** Clock time of the whole pass (prefill and steps), ms. */
  readonly elapsedMs: number;
}

/**
 * Teacher-forced negative log-likelihood under an eviction policy, SOL-style: each document's
 * first `prefill` tokens (default 1) are prefilled densely, then the true tokens are fed one
 * decode step at a time, with the policy's eviction rounds running after the prefill and after
 * every step exactly as in generation; token `t`'s log-probability is read from the logits
 * returned for position `t − 1` (float64 log-softmax). A document of `n` tokens therefore
 * predicts `n − prefill` tokens and its full cache peaks at `n − 1` entries per KV head.
 *
 * @throws LetheError `E_ARG` naming `options`, `model`, `documents`, `streamIds`, `policies` or
 *   `clock` when missing or of the wrong kind, `prefill` unless a positive integer; `E_ARG` for a
 *   document shorter than `prefill + 1` tokens (naming `documents[i]`), `E_SHAPE` for a
 *   `streamIds` length mismatch; rejects with `signal.reason` on abort.
 */
export async function teacherForce(options: TeacherForceOptions): Promise<TeacherForcedBatch> {
  requireObject(options, 'options', 'a TeacherForceOptions object');
  const { model, documents, streamIds, clock, signal } = options;
  requireObject(model, 'model', 'a DecoderModel');
  requireArray(documents, 'documents');
  requireArray(streamIds, 'streamIds');
  requireObject(options.policies, 'policies', 'a PolicySet ({} for the full cache)');
  requireFunction(clock, 'clock', 'a clock () => milliseconds');
  const prefill = assertInteger(options.prefill ?? 1, 'prefill', 1);
  documents.forEach((doc, i) => {
    if (doc.length < prefill + 1) {
      throw new LetheError(
        'E_ARG',
        `needs at least prefill + 1 = ${prefill + 1} tokens, has ${doc.length}`,
        `documents[${i}]`,
      );
    }
  });
  if (streamIds.length !== documents.length) {
    throw new LetheError(
      'E_SHAPE',
      `needs one id per document (${documents.length}), got ${streamIds.length}`,
      'streamIds',
    );
  }
  signal?.throwIfAborted();
  const session = new GenerationSession({
    model,
    eviction: options.policies.eviction,
    readSelector: options.policies.readSelector,
    compute: options.policies.compute,
    ceiling: options.policies.ceiling,
    seed: options.seed,
    streamIds,
  });
  const perToken = model.config.num_hidden_layers * model.config.num_key_value_heads;
  const recorders = documents.map(() => new ReadRecorder(perToken));
  const sumNll = new Float64Array(documents.length);

  const start = clock();
  let out = await session.prefill(documents.map((doc) => doc.slice(0, prefill)));
  documents.forEach((doc, i) => {
    recorders[i]!.prefill(prefill);
    sumNll[i] = -logProbability(out.logits[i]!, doc[prefill]!);
  });
  // Position t: feed token t, predict token t + 1.
  let active = documents.flatMap((doc, i) => (doc.length > prefill + 1 ? [i] : []));
  for (let t = prefill; active.length > 0; t++) {
    signal?.throwIfAborted();
    const reads = session.decodeReads;
    for (const i of active) recorders[i]!.step(session.caches[i]!, t + 1, reads[i]!.entries);
    out = await session.step(
      active,
      Int32Array.from(active, (i) => documents[i]![t]!),
    );
    active.forEach((i, row) => {
      sumNll[i]! -= logProbability(out.logits[row]!, documents[i]![t + 1]!);
    });
    active = active.filter((i) => documents[i]!.length > t + 2);
  }
  const elapsedMs = clock() - start;
  const compute = session.computeUsage;
  const reads = session.decodeReads;
  return {
    documents: documents.map((doc, i) => ({
      ...recorders[i]!.finish(session.caches[i]!, reads[i]!.entries),
      sumNll: sumNll[i]!,
      predicted: doc.length - prefill,
      compute: compute[i]!,
    })),
    predictedTokens: documents.reduce((sum, doc) => sum + doc.length - prefill, 0),
    elapsedMs,
  };
}

/**
 * `log softmax(logits)[token]`, in float64.
 *
 * @throws LetheError `E_ARG` naming `logits` when it is not an object with a length (an array or
 *   typed array), `token` unless it is an index into it.
 */
export function logProbability(logits: ArrayLike<number>, token: number): number {
  if (typeof requireObject(logits, 'logits', 'an array of logits').length !== 'number') {
    throw new LetheError('E_ARG', 'must be an array of logits', 'logits');
  }
  if (!(Number.isInteger(token) && token >= 0 && token < logits.length)) {
    throw new LetheError('E_ARG', `${token} is not a token id below ${logits.length}`, 'token');
  }
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]!);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  return logits[token]! - max - Math.log(sum);
}
