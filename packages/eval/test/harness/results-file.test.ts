import { describe, expect, it } from 'vitest';
import { type SweepResults, serializeResults } from '../../src/harness/index';

describe('serializeResults', () => {
  it('writes each sequence outcome on one line and parses back to the same document', () => {
    const sequences = [
      { example: 0, correct: true, peakTotal: 40, generated: 12 },
      { example: 1, correct: false, peakTotal: 38, generated: 9 },
    ];
    const results = {
      format: 'lethe-eval-results',
      version: 2,
      // A config value under the same key is written as usual.
      config: { policies: [{ options: { sequences: [1, 2] } }] },
      cells: [
        {
          key: { task: 't', policy: 'h2o', budget: 0.5, seed: 0 },
          metrics: { meanLive: { mean: 1, stderr: 0, n: 2 } },
          sequences,
          command: 'lethe eval "quoted"',
          elapsedMs: 3,
        },
      ],
    } as unknown as SweepResults;
    const text = serializeResults(results);
    expect(JSON.parse(text)).toEqual(results);
    const lines = text.split('\n').map((line) => line.trim());
    expect(lines).toContain(`${JSON.stringify(sequences[0])},`);
    expect(lines).toContain(JSON.stringify(sequences[1]));
    expect(text).toContain('"sequences": [\n            1,');
    expect(text.endsWith('}\n')).toBe(true);
  });
});
