import { LetheError } from '@lethe/core';

/** What {@link StopMatcher.push} decided for a piece of text. */
export interface StopScan {
  /** Text that can be sent now: it cannot be part of a stop sequence. */
  readonly text: string;
  /** Whether a stop sequence was found (the text before it was sent, the rest is dropped). */
  readonly stopped: boolean;
}

/**
 * Finds the request's stop sequences in streamed text, as the OpenAI API does: generation ends
 * as soon as one of them is complete, and the completion is the text before it (the stop
 * sequence is not returned). Where two could complete at once, the one completed first (as if
 * the text arrived character by character) wins, so the result does not depend on how the text
 * was split into pieces. Text that might
 * be the start of a stop sequence (a suffix equal to a prefix of one) is held back until the
 * next piece tells, so a streamed response never sends text it later has to take back.
 *
 * @example
 * ```ts
 * const stops = new StopMatcher(['\n\n']);
 * stops.push('Hello\n'); // { text: 'Hello', stopped: false }: '\n' may begin a stop
 * stops.push('\nmore'); // { text: '', stopped: true }
 * ```
 */
export class StopMatcher {
  private held = '';
  private done = false;
  private readonly sequences: readonly string[];

  /** @throws LetheError `E_ARG` naming `sequences` (not an array) or `sequences[i]` (not a non-empty string). */
  constructor(sequences: readonly string[]) {
    if (!Array.isArray(sequences)) {
      throw new LetheError('E_ARG', 'must be an array of stop strings', 'sequences');
    }
    sequences.forEach((sequence, i) => {
      if (typeof sequence !== 'string' || sequence.length === 0) {
        throw new LetheError('E_ARG', 'must be a non-empty string', `sequences[${i}]`);
      }
    });
    this.sequences = [...sequences];
  }

  /** Scans the next piece of generated text. */
  push(piece: string): StopScan {
    if (this.done) return { text: '', stopped: true };
    const text = this.held + piece;
    // the stop sequence completed first (smallest end; of those, the longest), as if the text
    // had arrived one character at a time
    let end = -1;
    let start = -1;
    for (const sequence of this.sequences) {
      const at = text.indexOf(sequence);
      if (at === -1) continue;
      const ends = at + sequence.length;
      if (end === -1 || ends < end || (ends === end && at < start)) {
        end = ends;
        start = at;
      }
    }
    if (start !== -1) {
      this.done = true;
      this.held = '';
      return { text: text.slice(0, start), stopped: true };
    }
    const keep = this.partialSuffix(text);
    this.held = text.slice(text.length - keep);
    return { text: text.slice(0, text.length - keep), stopped: false };
  }

  /** The text held back, once generation ended without a stop sequence. */
  flush(): string {
    const rest = this.done ? '' : this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some stop sequence. */
  private partialSuffix(text: string): number {
    let longest = 0;
    for (const sequence of this.sequences) {
      for (let length = Math.min(sequence.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(sequence.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
