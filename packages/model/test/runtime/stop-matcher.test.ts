import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StopMatcher } from '../../src/runtime/stop-matcher';

/**
 * The reference, one character at a time: the first position where a stop sequence ends; the
 * text before the longest one ending there.
 */
function cutAtStop(text: string, stops: readonly string[]): { text: string; stopped: boolean } {
  for (let end = 1; end <= text.length; end++) {
    const prefix = text.slice(0, end);
    const ending = stops.filter((stop) => prefix.endsWith(stop));
    if (ending.length > 0) {
      const longest = Math.max(...ending.map((stop) => stop.length));
      return { text: text.slice(0, end - longest), stopped: true };
    }
  }
  return { text, stopped: false };
}

/** Feeds `pieces` to a matcher the way a stream does; what it sent, and whether it stopped. */
function stream(pieces: readonly string[], stops: readonly string[]) {
  const matcher = new StopMatcher(stops);
  let sent = '';
  for (const piece of pieces) {
    const scan = matcher.push(piece);
    sent += scan.text;
    if (scan.stopped) return { text: sent, stopped: true };
  }
  return { text: sent + matcher.flush(), stopped: false };
}

describe('StopMatcher', () => {
  it('streams exactly the text before the first stop sequence, however the text is split', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', '\n', ' ', 'é');
    fc.assert(
      fc.property(
        fc.array(
          fc.array(alphabet, { maxLength: 6 }).map((chars) => chars.join('')),
          { maxLength: 12 },
        ),
        fc.array(
          fc.array(alphabet, { minLength: 1, maxLength: 4 }).map((chars) => chars.join('')),
          { maxLength: 4 },
        ),
        (pieces, stops) => {
          expect(stream(pieces, stops)).toEqual(cutAtStop(pieces.join(''), stops));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('never sends text it would have to take back: what is sent is always a prefix of the answer', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('x', 'y', 'END', 'EN', 'D'), { maxLength: 20 }),
        (pieces) => {
          const matcher = new StopMatcher(['END']);
          const answer = cutAtStop(pieces.join(''), ['END']).text;
          let sent = '';
          for (const piece of pieces) {
            const scan = matcher.push(piece);
            sent += scan.text;
            expect(answer.startsWith(sent)).toBe(true);
            if (scan.stopped) break;
          }
        },
      ),
    );
  });

  it('holds back a possible start of a stop sequence until the next piece tells', () => {
    const matcher = new StopMatcher(['\n\n']);
    expect(matcher.push('done\n')).toEqual({ text: 'done', stopped: false });
    expect(matcher.push('more')).toEqual({ text: '\nmore', stopped: false });
    expect(matcher.push('\n')).toEqual({ text: '', stopped: false });
    expect(matcher.push('\nrest')).toEqual({ text: '', stopped: true });
    expect(matcher.push('after')).toEqual({ text: '', stopped: true });
  });

  it('refuses stop sequences that are not non-empty strings, naming them', () => {
    expectLetheError(() => new StopMatcher('\n' as never), 'E_ARG', 'sequences');
    expectLetheError(() => new StopMatcher(['a', '']), 'E_ARG', 'sequences[1]');
    expectLetheError(() => new StopMatcher([3 as never]), 'E_ARG', 'sequences[0]');
  });
});
