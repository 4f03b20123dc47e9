import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { BamScorer } from '../../src/scorer/bam-scorer';
import { describeGenome, scorerParameterCount } from '../../src/scorer/genome-layout';
import { MlpScorer } from '../../src/scorer/mlp-scorer';
import { createScorer } from '../../src/scorer/scorer';
import type { ScorerSpec } from '../../src/scorer/scorer-spec';

const BAM: ScorerSpec = { kind: 'bam', features: 25, hidden: 32 };
const MLP: ScorerSpec = { kind: 'mlp', features: 25, depth: 2 };

describe('scorer errors', () => {
  it('rejects a genome of the wrong length, stating expected, got and the spec', () => {
    const e = expectLetheError(() => createScorer(BAM, new Float64Array(4171)), 'E_ARG', 'genome');
    expect(e.message).toContain('expected 4172');
    expect(e.message).toContain('got 4171');
    expect(e.message).toContain('bam(features=25, hidden=32)');
    const m = expectLetheError(() => createScorer(MLP, new Float32Array(1327)), 'E_ARG', 'genome');
    expect(m.message).toContain('expected 1326');
    expect(m.message).toContain('got 1327');
    expect(m.message).toContain('mlp(features=25, depth=2)');
  });

  it('rejects NaN and ±Infinity in the genome, naming the first bad index', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      for (const spec of [BAM, MLP]) {
        const genome = new Float64Array(scorerParameterCount(spec));
        genome[1000] = bad;
        genome[1200] = bad;
        const e = expectLetheError(() => createScorer(spec, genome), 'E_ARG', 'genome');
        expect(e.message).toContain('index 1000');
        expectLetheError(() => createScorer(spec, Float32Array.from(genome)), 'E_ARG', 'genome');
      }
    }
  });

  it('rejects sizes that are not positive integers, and unknown kinds', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const cases: [ScorerSpec, string][] = [
        [{ kind: 'bam', features: bad, hidden: 4 }, 'spec.features'],
        [{ kind: 'bam', features: 4, hidden: bad }, 'spec.hidden'],
        [{ kind: 'mlp', features: bad, depth: 2 }, 'spec.features'],
        [{ kind: 'mlp', features: 4, depth: bad }, 'spec.depth'],
      ];
      for (const [spec, argument] of cases) {
        expectLetheError(() => createScorer(spec, new Float64Array(10)), 'E_ARG', argument);
        expectLetheError(() => scorerParameterCount(spec), 'E_ARG', argument);
        expectLetheError(() => describeGenome(spec), 'E_ARG', argument);
      }
    }
    const unknown = { kind: 'lstm', features: 4 } as unknown as ScorerSpec;
    expectLetheError(() => createScorer(unknown, new Float64Array(10)), 'E_ARG', 'spec.kind');
    expectLetheError(() => scorerParameterCount(unknown), 'E_ARG', 'spec.kind');
  });

  it('rejects a spec of the other kind in a scorer class', () => {
    const mlpAsBam = MLP as unknown as ConstructorParameters<typeof BamScorer>[0];
    const bamAsMlp = BAM as unknown as ConstructorParameters<typeof MlpScorer>[0];
    expectLetheError(() => new BamScorer(mlpAsBam, new Float64Array(1326)), 'E_ARG', 'spec.kind');
    expectLetheError(() => new MlpScorer(bamAsMlp, new Float64Array(4172)), 'E_ARG', 'spec.kind');
  });

  it('rejects a bad n, an x shorter than n·F and an out shorter than n', () => {
    for (const spec of [BAM, MLP]) {
      const scorer = createScorer(spec, new Float64Array(scorerParameterCount(spec)));
      const x = new Float32Array(4 * 25);
      const out = new Float32Array(4);
      for (const n of [-1, 1.5, Number.NaN]) {
        expectLetheError(() => scorer.score(x, n, out), 'E_ARG', 'n');
      }
      const e = expectLetheError(() => scorer.score(x.subarray(1), 4, out), 'E_SHAPE', 'x');
      expect(e.message).toContain('100');
      expectLetheError(() => scorer.score(x, 4, out.subarray(1)), 'E_SHAPE', 'out');
      expect(() => scorer.score(new Float32Array(0), 0, new Float32Array(0))).not.toThrow();
    }
  });
});
