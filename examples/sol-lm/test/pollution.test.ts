import { join } from 'node:path';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { beforeAll, expect, it } from 'vitest';
import { measurePollution } from '../src/pollution-run';

const MODEL = join(__dirname, '../../../models/lm');

beforeAll(async () => {
  await initBackend('wasm');
});

it('measures the direct and later cost of a compressed knob; the refresh removes the later one', async () => {
  const { model, task } = await loadTaskModel(MODEL);
  try {
    if (task.kind !== 'perplexity') throw new Error('not a language model');
    const documents = [0, 1].map((i) =>
      task.tokenizer.encode(task.document(0, i).slice(0, 48), { addBos: true }),
    );
    const results = await measurePollution(
      model,
      documents,
      [
        { axis: 'tokenKeep', value: 0.1 },
        { axis: 'tokenKeep', value: 1 },
      ],
      { prefill: 24, corrupt: 4, tail: 6 },
    );
    const [sparse, sparseRefreshed, dense, denseRefreshed] = results;
    // Reading a tenth of 24+ entries (the anchors) costs the compressed steps…
    expect(sparse!.direct).toBeGreaterThan(0.05);
    expect(sparseRefreshed!.direct).toBe(sparse!.direct);
    // …their entries cost the later dense steps, unless they are recomputed densely.
    expect(Math.abs(sparse!.tail)).toBeGreaterThan(1e-4);
    expect(Math.abs(sparseRefreshed!.tail)).toBeLessThan(1e-5);
    // Each mean comes with its paired-bootstrap interval over the two documents.
    for (const r of results) {
      for (const [mean, test] of [
        [r.direct, r.directTest],
        [r.tail, r.tailTest],
      ] as const) {
        expect(test.n).toBe(2);
        expect(test.meanDifference).toBe(mean);
        expect(test.low).toBeLessThanOrEqual(mean + 1e-12);
        expect(test.high).toBeGreaterThanOrEqual(mean - 1e-12);
      }
    }
    // The dense setting changes nothing.
    for (const r of [dense!, denseRefreshed!]) {
      expect(Math.abs(r.direct)).toBeLessThan(1e-5);
      expect(Math.abs(r.tail)).toBeLessThan(1e-5);
    }
  } finally {
    model.dispose();
  }
});
