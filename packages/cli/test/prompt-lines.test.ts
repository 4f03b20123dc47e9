import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { promptLines } from '../src/prompt-lines';

/** Collects what is written to a stream. */
function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { stream, text: () => text };
}

describe('promptLines (lethe generate reading prompts)', () => {
  it('on a terminal asks with `lethe> ` before every line, after the previous one is handled', async () => {
    const input = new PassThrough();
    const output = sink();
    const seen: string[] = [];
    const promptsBefore: number[] = [];
    const reading = (async () => {
      for await (const line of promptLines(input, output.stream, true)) {
        seen.push(line);
        promptsBefore.push(output.text().split('lethe> ').length - 1);
      }
    })();
    input.write('numbers: 3 4 5\r');
    input.write('target: 12\r');
    input.end();
    await reading;
    expect(seen).toEqual(['numbers: 3 4 5', 'target: 12']);
    // One prompt before the first line, one more after each line was handled.
    expect(promptsBefore).toEqual([1, 2]);
    expect(output.text().split('lethe> ').length - 1).toBe(3);
  });

  it('reads piped input silently', async () => {
    const input = new PassThrough();
    const output = sink();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const line of promptLines(input, output.stream, false)) seen.push(line);
    })();
    input.end('first\nsecond\n');
    await reading;
    expect(seen).toEqual(['first', 'second']);
    expect(output.text()).toBe('');
  });
});
