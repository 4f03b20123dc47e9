import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '@lethe/core';
import { runDocExample } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { gateValues, initGateParameters } from '../src/index';

// docs/embedding.md's GSA example, run as written by a bare `node` from this package's directory
// (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(pkg, '../../docs/embedding.md');

describe('docs/embedding.md', () => {
  it('the GSA example keeps the anchors and the highest gates of each head', () => {
    const heads = runDocExample(doc, '### GSA', pkg)
      .trim()
      .split('\n')
      .map((line) => line.split(' ').map((row) => row.split(':').map(Number)));
    // The example's gates, token by token: its gate parameters and attention inputs.
    const parameters = initGateParameters({ layers: 1, hiddenSize: 8, kvHeads: 2 }, 'head', {
      seed: 7,
    });
    const data = new Rng(42);
    const gates = Array.from({ length: 24 }, () => gateValues(parameters, 0, data.normal(8), 1));
    expect(heads).toHaveLength(2);
    heads.forEach((rows, h) => {
      const positions = rows.map(([p]) => p!);
      // Capacity 8 after the last round: sink 0, window 22–23, and the 5 highest gates of 1–21.
      const best = Array.from({ length: 21 }, (_, i) => i + 1)
        .sort((a, b) => gates[b]![h]! - gates[a]![h]! || a - b)
        .slice(0, 5);
      expect(positions).toEqual([0, ...best.sort((a, b) => a - b), 22, 23]);
      for (const [p, g] of rows) expect(g).toBeCloseTo(gates[p!]![h]!, 2);
    });
  });
});
