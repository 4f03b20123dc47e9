import { LetheError } from '@lethe/core';
import type { LayerControls, ReadAnchors } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { DecoderModel, KeyBiasHook, StepResult } from '../decoder/index';
import type { EvictionRound } from './eviction-rounds';
import type { SequenceState } from './sequence-state';

/** One sequence's outputs of a step: the next-token logits and the final hidden state. */
export interface StepRow {
  /** Next-token logits, `[vocab]`. */
  readonly logits: Float32Array;
  /** Final hidden state of the sequence's last token, `[hidden]`. */
  readonly hidden: Float32Array;
  /**
   * A prefill chunk's next-token logits at every position, `[chunk length, vocab]` row-major
   * (row `t` predicts the chunk's token `t + 1`), when the step was asked for them.
   */
  readonly positionLogits?: Float32Array;
}

/** How a batched step reports eviction rounds and errors. */
export interface StepHooks {
  /** Called after every eviction round; `index` is the sequence's place in the states given. */
  readonly onRound?: (index: number, round: EvictionRound) => void;
  /**
   * Given, every sequence's failure is its own: a model call over several sequences that throws
   * is run again for each sequence alone (a failed call changes no cache, and alone each sequence
   * gets the outputs it gets in the batch), and a sequence whose call, policy or cache throws is
   * reported here and leaves the step (its row is undefined) while the others go on. Absent, the
   * first error is thrown.
   */
  readonly onError?: (index: number, error: unknown) => void;
}

/** What one sequence got from one model call. */
interface CallRow extends StepRow {
  /** Cached entries its new tokens read, summed over layers and KV heads. */
  readonly entries: number;
  /** Entries live when they were read. */
  readonly live: number;
}

/**
 * Feeds one prefill chunk per sequence (`pieces[i]` to `states[i]`, ragged) in one batched
 * `prefill` — each sequence with its own gate hook, if any — then gives each its outputs and
 * runs the eviction rounds due ({@link SequenceState.advance}), each leaving room for
 * `incoming[i]` tokens (its next chunk; default 1). A sequence `everyPosition` flags gets its
 * logits at every position of its chunk too (`positionLogits`).
 *
 * @returns each sequence's outputs (undefined for one that failed, see {@link StepHooks.onError}).
 * @throws without `onError`, the model's, policies' and caches' errors.
 */
export async function prefillStates(
  model: DecoderModel,
  states: readonly SequenceState[],
  pieces: Int32Array[],
  hooks: StepHooks = {},
  everyPosition?: readonly boolean[],
  incoming?: readonly number[],
): Promise<(StepRow | undefined)[]> {
  const calls = await modelRows(
    states.map((_, i) => i),
    (indices) => {
      const keyBias = stepKeyBias(indices.map((i) => states[i]!));
      return model.prefillAsync(
        indices.map((i) => states[i]!.cache),
        indices.map((i) => pieces[i]!),
        {
          ...(keyBias === undefined ? {} : { keyBias }),
          ...(everyPosition === undefined
            ? {}
            : { everyPosition: indices.map((i) => everyPosition[i] === true) }),
        },
      );
    },
    hooks.onError,
    (i) => (everyPosition?.[i] === true ? pieces[i]!.length : 0),
  );
  const rows: (StepRow | undefined)[] = [];
  for (const [i, state] of states.entries()) {
    const row = calls.get(i);
    const advanced = pieces[i]!.length;
    const done =
      row !== undefined &&
      (await attemptAsync(i, hooks.onError, () =>
        state.advance(row.logits, row.hidden, advanced, roundListener(i, hooks), incoming?.[i]),
      ));
    if (!done) {
      rows.push(undefined);
      continue;
    }
    const { logits, hidden, positionLogits } = row;
    rows.push(
      positionLogits === undefined ? { logits, hidden } : { logits, hidden, positionLogits },
    );
  }
  return rows;
}

/**
 * One decode step of `states[i]` feeding `tokens[i]`, batched: each compute policy's controls
 * (embeddings read in one call for those that need them), one `decodeStep` over every sequence
 * with its own controls, read selector and gate hook, then per sequence its reads and controls
 * counted, its outputs taken and its eviction rounds run, then one batched KV refresh of the
 * sequences whose `refreshEvery`-th step since their last refresh this was (their caches
 * truncated by those tokens and prefilled again densely, only the hidden state kept). The rows
 * returned are the step's own, computed before the refresh.
 *
 * @param readAnchors the entries a `tokenKeep` read never skips.
 * @returns each sequence's outputs (undefined for one that failed, see {@link StepHooks.onError}).
 * @throws LetheError `E_ARG` naming `tokens` for a token outside the vocabulary whose embedding a
 *   compute policy needs; without `onError`, the model's, policies' and caches' errors.
 */
export async function decodeStates(
  model: DecoderModel,
  states: readonly SequenceState[],
  tokens: Int32Array,
  readAnchors: ReadAnchors,
  hooks: StepHooks = {},
): Promise<(StepRow | undefined)[]> {
  const { onError } = hooks;
  const embeddings = await embeddingsFor(model, states, tokens);
  const controls = states.map((state, i) => {
    let perLayer: readonly (LayerControls | undefined)[] | undefined;
    const done = attempt(i, onError, () => {
      perLayer = state.stepControls(tokens[i]!, embeddings[i]);
    });
    return done ? perLayer : FAILED;
  });
  const steering = states.some((state) => state.compute !== undefined);
  const calls = await modelRows(
    states.flatMap((_, i) => (controls[i] === FAILED ? [] : [i])),
    (indices) => {
      const group = indices.map((i) => states[i]!);
      const keyBias = stepKeyBias(group);
      const readSelector = stepReadSelector(group);
      return model.decodeStepAsync(
        group.map((state) => state.cache),
        Int32Array.from(indices, (i) => tokens[i]!),
        steering
          ? indices.map((i) => controls[i] as readonly (LayerControls | undefined)[])
          : undefined,
        {
          ...(keyBias === undefined ? {} : { keyBias }),
          ...(readSelector === undefined ? {} : { readSelector }),
          readAnchors,
        },
      );
    },
    onError,
  );
  const rows: (StepRow | undefined)[] = [];
  for (const [i, state] of states.entries()) {
    const row = calls.get(i);
    const perLayer = controls[i] as readonly (LayerControls | undefined)[] | undefined;
    const done =
      row !== undefined &&
      (await attemptAsync(i, onError, async () => {
        state.recordDecode(row.entries, row.live, perLayer);
        await state.advance(row.logits, row.hidden, 1, roundListener(i, hooks));
      }));
    rows.push(done ? { logits: row.logits, hidden: row.hidden } : undefined);
  }
  const due = states.flatMap((state, i) =>
    rows[i] !== undefined && state.refresh?.feed(tokens[i]!) ? [i] : [],
  );
  if (due.length > 0) {
    try {
      await refreshStates(
        model,
        due.map((i) => states[i]!),
      );
    } catch (error) {
      if (onError === undefined) throw error;
      for (const i of due) {
        onError(i, error);
        rows[i] = undefined;
      }
    }
  }
  return rows;
}

/**
 * SOL's KV refresh of `due` (one batched dense prefill): each cache truncated by the tokens its
 * decode steps fed since its last refresh, those tokens prefilled again without controls or read
 * selector (with the gate hook, if any), the logits discarded and the refreshed final hidden
 * state kept as what the compute policy observes next. A refresh that fails leaves the caches
 * truncated and rethrows.
 */
async function refreshStates(model: DecoderModel, due: readonly SequenceState[]): Promise<void> {
  const replay = due.map((state) => state.refresh!.take());
  for (const state of due) {
    state.cache.truncate(state.cache.length(0) - state.refresh!.every);
  }
  const keyBias = stepKeyBias(due);
  const out = await model.prefillAsync(
    due.map((state) => state.cache),
    replay,
    keyBias === undefined ? {} : { keyBias },
  );
  out.logits.dispose();
  try {
    const hidden = (await out.hidden.data()) as Float32Array;
    const width = out.hidden.shape[1];
    due.forEach((state, i) => {
      state.lastHidden = hidden.slice(i * width, (i + 1) * width);
      state.refresh!.completed();
    });
  } finally {
    out.hidden.dispose();
  }
}

/** The gate hooks of a step over `states`: none, one for all, or one per sequence. */
function stepKeyBias(
  states: readonly SequenceState[],
): KeyBiasHook | (KeyBiasHook | undefined)[] | undefined {
  return batchOption(states.map((state) => state.keyBias));
}

/** The read selectors of a step over `states`: none, one for all, or one per sequence. */
function stepReadSelector(states: readonly SequenceState[]) {
  return batchOption(states.map((state) => state.readSelector));
}

/** `values` as a step option: undefined when none is set, the value when all share it, else the list. */
function batchOption<T>(values: (T | undefined)[]): T | (T | undefined)[] | undefined {
  const first = values[0];
  if (values.every((value) => value === first)) return first;
  return values;
}

/** A marker for a sequence that failed before the model call. */
const FAILED = Symbol('failed');

/** The input embeddings of the tokens whose sequence's compute policy needs them (one device read). */
async function embeddingsFor(
  model: DecoderModel,
  states: readonly SequenceState[],
  tokens: Int32Array,
): Promise<(Float32Array | undefined)[]> {
  const needing = states.flatMap((state, i) => (state.compute?.policy.needs?.embedding ? [i] : []));
  const out: (Float32Array | undefined)[] = states.map(() => undefined);
  if (needing.length === 0) return out;
  const vocab = model.config.vocab_size;
  for (const i of needing) {
    const token = tokens[i]!;
    if (!(token >= 0 && token < vocab)) {
      throw new LetheError('E_ARG', `token ${token} at ${i} is outside [0, ${vocab})`, 'tokens');
    }
  }
  const rows = await model.embeddingRowsAsync(Int32Array.from(needing, (i) => tokens[i]!));
  const width = model.config.hidden_size;
  needing.forEach((i, j) => {
    out[i] = rows.subarray(j * width, (j + 1) * width);
  });
  return out;
}

/**
 * Runs the model call on the sequences `indices`, downloads its outputs (and frees them), and
 * sums each sequence's reads. With `onError`, a failing call over several sequences is run again
 * for each alone, and a sequence whose call fails alone is reported and left out of the map.
 * `positionRows(i)`: how many rows of the call's `positionLogits` are sequence `i`'s (0: none).
 */
async function modelRows(
  indices: readonly number[],
  call: (indices: readonly number[]) => Promise<StepResult>,
  onError: ((index: number, error: unknown) => void) | undefined,
  positionRows: (index: number) => number = () => 0,
): Promise<Map<number, CallRow>> {
  const rows = new Map<number, CallRow>();
  if (indices.length === 0) return rows;
  let out: StepResult;
  try {
    out = await call(indices);
  } catch (error) {
    if (onError === undefined) throw error;
    if (indices.length === 1) {
      onError(indices[0]!, error);
      return rows;
    }
    for (const index of indices) {
      for (const [i, row] of await modelRows([index], call, onError, positionRows)) {
        rows.set(i, row);
      }
    }
    return rows;
  }
  const [logits, hidden, positions] = await Promise.all([
    out.logits.data(),
    out.hidden.data(),
    out.positionLogits?.data(),
  ]);
  const vocab = out.logits.shape[1];
  const width = out.hidden.shape[1];
  tf.dispose([out.logits, out.hidden, ...(out.positionLogits ? [out.positionLogits] : [])]);
  const perSequence = out.reads.entries.length / indices.length;
  let positionRow = 0;
  indices.forEach((index, j) => {
    const ownRows = positions === undefined ? 0 : positionRows(index);
    const positionLogits =
      ownRows === 0
        ? undefined
        : (positions as Float32Array).slice(positionRow * vocab, (positionRow + ownRows) * vocab);
    positionRow += ownRows;
    let entries = 0;
    let live = 0;
    for (let k = j * perSequence; k < (j + 1) * perSequence; k++) {
      entries += out.reads.entries[k]!;
      live += out.reads.live[k]!;
    }
    rows.set(index, {
      logits: (logits as Float32Array).slice(j * vocab, (j + 1) * vocab),
      hidden: (hidden as Float32Array).slice(j * width, (j + 1) * width),
      entries,
      live,
      ...(positionLogits === undefined ? {} : { positionLogits }),
    });
  });
  return rows;
}

/** {@link attempt} of an asynchronous `task`. */
async function attemptAsync(
  index: number,
  onError: ((index: number, error: unknown) => void) | undefined,
  task: () => Promise<void>,
): Promise<boolean> {
  if (onError === undefined) {
    await task();
    return true;
  }
  try {
    await task();
    return true;
  } catch (error) {
    onError(index, error);
    return false;
  }
}

/** Runs `task` for sequence `index`; with `onError`, reports its error and returns false. */
function attempt(
  index: number,
  onError: ((index: number, error: unknown) => void) | undefined,
  task: () => void,
): boolean {
  if (onError === undefined) {
    task();
    return true;
  }
  try {
    task();
    return true;
  } catch (error) {
    onError(index, error);
    return false;
  }
}

/** The eviction-round callback of sequence `index`, or undefined. */
function roundListener(
  index: number,
  hooks: StepHooks,
): ((round: EvictionRound) => void) | undefined {
  const onRound = hooks.onRound;
  return onRound === undefined ? undefined : (round) => onRound(index, round);
}
