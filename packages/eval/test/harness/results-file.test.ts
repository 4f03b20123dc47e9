import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  checkResults,
  emptyResults,
  type SweepResults,
  serializeResults,
  validateSweepConfig,
} from '../../src/harness/index';

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

describe('checkResults', () => {
  const config = validateSweepConfig({
    tasks: ['toy', 'toy-lm'],
    policies: ['full', 'h2o'],
    budgets: [0.5],
    seeds: [0],
    examplesPerCell: 2,
    samplesPerExample: 2,
  });
  const aggregate = { mean: 2, stderr: 0.5, n: 2 };
  const fraction = { mean: 0.5, stderr: 0.5, n: 2 };
  const generationCell = {
    key: { task: 'toy', policy: 'h2o', budget: 0.5, seed: 0 },
    metrics: {
      accuracy: fraction,
      passAtK: { '1': 0.5, '2': 0.75 },
      peakKvReduction: aggregate,
      meanLive: aggregate,
      peakLive: aggregate,
      netKeepRate: fraction,
      realisedBudget: fraction,
      tokensPerSecond: { mean: 900, stderr: 0, n: 1 },
    },
    sequences: [0, 0, 1, 1].map((example) => ({
      example,
      correct: example === 0,
      peakTotal: 12,
      generated: 4,
    })),
    command: 'lethe eval …',
    elapsedMs: 30,
  };
  const lmCell = {
    key: { task: 'toy-lm', policy: 'full', budget: 1, seed: 0 },
    metrics: {
      perplexity: aggregate,
      meanLive: aggregate,
      peakLive: aggregate,
      tokensPerSecond: aggregate,
    },
    documents: [
      { example: 0, sumNll: 5.5, predicted: 7 },
      { example: 1, sumNll: 0, predicted: 1 },
    ],
    command: 'lethe eval …',
    elapsedMs: 0,
  };
  const document = (cells: unknown[]) => ({ ...emptyResults(config), cells });

  it('accepts well-formed cells', () => {
    const json = document([generationCell, lmCell]);
    expect(checkResults(json, config, 'results.json')).toEqual(json);
  });

  it('refuses a cell with a malformed key, metric, outcome or field, naming the file and the cell', () => {
    const cases: [unknown, string][] = [
      [{ ...lmCell, metrics: {} }, 'cells[1] (toy-lm full 1 seed 0): metrics.meanLive must be'],
      [
        { ...lmCell, metrics: { ...lmCell.metrics, tokensPerSecond: null } },
        'cells[1] (toy-lm full 1 seed 0): metrics.tokensPerSecond must be an aggregate',
      ],
      [
        { ...lmCell, metrics: { ...lmCell.metrics, perplexity: { mean: 2, stderr: 1, n: 1 } } },
        'metrics.perplexity must be an aggregate',
      ],
      [
        { ...lmCell, metrics: { ...lmCell.metrics, peakLive: { mean: 2, stderr: -1, n: 3 } } },
        'metrics.peakLive must be an aggregate',
      ],
      [
        { ...lmCell, metrics: { ...lmCell.metrics, perplexity: { mean: 0.5, stderr: 0, n: 1 } } },
        'metrics.perplexity.mean must be in [1, ∞), got 0.5',
      ],
      [
        {
          ...generationCell,
          metrics: { ...generationCell.metrics, accuracy: { mean: 1.25, stderr: 0, n: 1 } },
        },
        'metrics.accuracy.mean must be in [0, 1], got 1.25',
      ],
      [
        { ...lmCell, metrics: { ...lmCell.metrics, meanLive: { mean: -3, stderr: 0, n: 1 } } },
        'metrics.meanLive.mean must be in [0, ∞), got -3',
      ],
      [
        { ...lmCell, metrics: { ...lmCell.metrics, accurracy: aggregate } },
        'metrics.accurracy is unknown',
      ],
      [
        { ...generationCell, metrics: { ...generationCell.metrics, passAtK: { '2': 1.5 } } },
        'metrics.passAtK.2 must be a probability',
      ],
      [{ ...lmCell, key: { ...lmCell.key, budget: null } }, 'cells[1]: key must be'],
      [{ ...lmCell, key: undefined }, 'cells[1]: key must be'],
      [
        { ...generationCell, sequences: generationCell.sequences.slice(1) },
        'sequences must be an array of 4 outcomes (examplesPerCell × samplesPerExample), got 3',
      ],
      [
        { ...generationCell, sequences: [...generationCell.sequences.slice(0, 3), { example: 1 }] },
        'sequences[3] must be { example: 1, correct: boolean',
      ],
      [
        { ...lmCell, documents: lmCell.documents.slice(1) },
        'documents must be an array of 2 outcomes (examplesPerCell), got 1',
      ],
      [
        { ...lmCell, documents: [lmCell.documents[0], { example: 1, sumNll: -1, predicted: 3 }] },
        'documents[1] must be { example: 1, sumNll: finite number ≥ 0, predicted: integer ≥ 1 }',
      ],
      [
        { ...lmCell, documents: [{ ...lmCell.documents[0], predicted: 0 }, lmCell.documents[1]] },
        'documents[0] must be',
      ],
      [{ ...lmCell, command: null }, 'command must be a string'],
      [{ ...lmCell, elapsedMs: -1 }, 'elapsedMs must be a finite number ≥ 0'],
      [null, 'cells[1] is not an object'],
    ];
    for (const [cell, message] of cases) {
      const error = expectLetheError(() =>
        checkResults(document([generationCell, cell]), config, 'out/results.json'),
      );
      expect([error.code, error.argument]).toEqual(['E_FORMAT', 'out/results.json']);
      expect(error.message).toContain(message);
    }
  });
});
