import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultPopulationSize, expectedNormalNorm, strategyParameters } from '../src/index';

/**
 * Values computed by hand from the tutorial's Table 1 (2023 revision, c_μ with the 1/4 term),
 * independently of this package (a 30-line Python script over `math`, printed with repr()).
 */
const TABLE = [
  {
    n: 2,
    lambda: 6,
    mu: 3,
    muEff: 2.0286114646100617,
    muEffMinus: 2.4319189586928855,
    c1: 0.1548153998964136,
    cmu: 0.08559277942666424,
    alphaMuMinus: 2.8087436923234765,
    alphaMuEffMinus: 2.207323654840602,
    alphaPosDefMinus: 4.437242403886062,
    cs: 0.44620498737831715,
    damps: 1.4462049873783172,
    cc: 0.6245545390268264,
    chiN: 1.254272742818995,
    weightSum: -1.2073236548406017,
    w1: 0.6370425712412168,
    wLast: -1.1559817781589212,
  },
  {
    n: 10,
    lambda: 10,
    mu: 5,
    muEff: 3.1672992814107026,
    muEffMinus: 3.989115019106924,
    c1: 0.015283824524751714,
    cmu: 0.023551776650417484,
    alphaMuMinus: 1.6489457144406465,
    alphaMuEffMinus: 2.543984507906371,
    alphaPosDefMinus: 4.081069607153365,
    cs: 0.2844285879463675,
    damps: 1.2844285879463675,
    cc: 0.29499038303562225,
    chiN: 3.0847265651690123,
    weightSum: -0.6489457144406463,
    w1: 0.45627264690340597,
    wLast: -0.5497499176973852,
  },
  {
    n: 20,
    lambda: 12,
    mu: 6,
    muEff: 3.729458934303068,
    muEffMinus: 4.774595099002212,
    c1: 0.004372354435160246,
    cmu: 0.009216561776274355,
    alphaMuMinus: 1.474401901847578,
    alphaMuEffMinus: 2.6666827195203537,
    alphaPosDefMinus: 5.351296436420708,
    cs: 0.19942801385173584,
    damps: 1.199428013851736,
    cc: 0.17176721127681213,
    chiN: 4.416766652699585,
    weightSum: -0.47440190184757824,
    w1: 0.4024029428187127,
    wLast: -0.4152044225611549,
  },
  {
    n: 100,
    lambda: 17,
    mu: 8,
    muEff: 5.096188878610173,
    muEffMinus: 6.685960650512333,
    c1: 0.000194802926953566,
    cmu: 0.0006806381419706107,
    alphaMuMinus: 1.2862063039687501,
    alphaMuEffMinus: 2.884380690786183,
    alphaPosDefMinus: 14.679232580742102,
    cs: 0.06445444616102276,
    damps: 1.0644544461610228,
    cc: 0.03891342005784185,
    chiN: 9.97504761904762,
    weightSum: -0.28620630396875024,
    w1: 0.3150958752676225,
    wLast: -0.26172644923877597,
  },
] as const;

const close = (actual: number, expected: number): void => {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-13 * Math.max(1, Math.abs(expected)));
};

describe('strategy parameters (tutorial Table 1)', () => {
  it.each(TABLE)('n = $n matches the values computed by hand', (t) => {
    const p = strategyParameters(t.n);
    expect(p.lambda).toBe(t.lambda);
    expect(p.mu).toBe(t.mu);
    for (const key of [
      'muEff',
      'muEffMinus',
      'c1',
      'cmu',
      'alphaMuMinus',
      'alphaMuEffMinus',
      'alphaPosDefMinus',
      'cs',
      'damps',
      'cc',
      'chiN',
    ] as const) {
      close(p[key], t[key]);
    }
    close(
      p.weights.reduce((a, b) => a + b, 0),
      t.weightSum,
    );
    close(p.weights[0]!, t.w1);
    close(p.weights[p.lambda - 1]!, t.wLast);
    expect(p.cm).toBe(1);
    close(p.hsigThreshold, 1.4 + 2 / (t.n + 1));
    close(p.injectionClip, Math.sqrt(t.n) + (2 * t.n) / (t.n + 2));
    close(p.flatFitnessFactor, Math.exp(0.2 + t.cs / t.damps));
  });

  it('n = 10, λ = 50: α_posdef^- is the binding limit of the negative weights', () => {
    const p = strategyParameters(10, { populationSize: 50 });
    expect(p.mu).toBe(25);
    close(p.muEff, 13.951320940285155);
    close(p.cmu, 0.1554022931595714);
    close(p.alphaPosDefMinus, 0.5344049412928432);
    close(
      p.weights.reduce((a, b) => a + b, 0),
      0.46559505870715695,
    );
  });

  it('separable, n = 1000: c_1 and c_μ are scaled by (n + 2)/3 (Ros & Hansen 2008)', () => {
    const full = strategyParameters(1000);
    const sep = strategyParameters(1000, { diagonal: true });
    close(sep.c1, 0.0006662619116406926);
    close(sep.cmu, 0.0036052285579850356);
    close(sep.c1, (full.c1 * 1002) / 3);
    close(sep.cmu, Math.min(1 - sep.c1, (full.cmu * 1002) / 3));
    close(sep.alphaPosDefMinus, 0.27619012040859003);
    expect(sep.cs).toBe(full.cs);
    expect(sep.cc).toBe(full.cc);
    expect(sep.eigenInterval).toBe(1);
  });

  it('E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²)) is within 0.5 % of the exact value', () => {
    // Exact: √2 Γ((n+1)/2) / Γ(n/2); for n = 1: √(2/π), n = 2: √(π/2), n = 3: 2√(2/π).
    const exact = [Math.sqrt(2 / Math.PI), Math.sqrt(Math.PI / 2), 2 * Math.sqrt(2 / Math.PI)];
    exact.forEach((e, i) => {
      expect(Math.abs(expectedNormalNorm(i + 1) / e - 1)).toBeLessThan(0.005);
    });
  });

  it('eigendecomposition interval max(1, ⌊1/(10 n (c_1 + c_μ))⌋)', () => {
    expect(strategyParameters(10).eigenInterval).toBe(1);
    const p = strategyParameters(200);
    expect(p.eigenInterval).toBe(Math.max(1, Math.floor(1 / (10 * 200 * (p.c1 + p.cmu)))));
    expect(p.eigenInterval).toBe(2);
  });

  it('without active CMA the negative weights are zero', () => {
    const p = strategyParameters(10, { active: false });
    expect(p.weights.slice(p.mu).every((w) => w === 0)).toBe(true);
  });

  it('rejects bad arguments with coded errors', () => {
    expectLetheError(() => strategyParameters(0), 'E_ARG', 'dimension');
    expectLetheError(() => strategyParameters(2.5), 'E_ARG', 'dimension');
    expectLetheError(() => strategyParameters(5, { populationSize: 1 }), 'E_ARG', 'populationSize');
    expectLetheError(() => strategyParameters(5, { cm: 0 }), 'E_ARG', 'cm');
    expectLetheError(() => strategyParameters(5, { cm: 1.5 }), 'E_ARG', 'cm');
    expectLetheError(() => defaultPopulationSize(-1), 'E_ARG', 'dimension');
  });

  it('properties: positive weights sum to 1, μ_eff ∈ [1, μ], negative weights as specified', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.option(fc.integer({ min: 2, max: 400 }), { nil: undefined }),
        fc.boolean(),
        (n, populationSize, diagonal) => {
          const p = strategyParameters(n, { populationSize, diagonal });
          let positive = 0;
          let negative = 0;
          for (const w of p.weights) {
            if (w >= 0) positive += w;
            else negative -= w;
          }
          expect(Math.abs(positive - 1)).toBeLessThan(1e-12);
          expect(p.muEff).toBeGreaterThanOrEqual(1 - 1e-12);
          expect(p.muEff).toBeLessThanOrEqual(p.mu + 1e-12);
          const limit = Math.min(p.alphaMuMinus, p.alphaMuEffMinus, p.alphaPosDefMinus);
          if (negative > 0) expect(Math.abs(negative - limit)).toBeLessThan(1e-12 * limit + 1e-15);
          // Weights are non-increasing; the first μ positive.
          for (let i = 1; i < p.lambda; i++)
            expect(p.weights[i]!).toBeLessThanOrEqual(p.weights[i - 1]!);
          for (let i = 0; i < p.mu; i++) expect(p.weights[i]!).toBeGreaterThan(0);
          // Learning rates in range, and c_1 + c_μ ≤ 1.
          for (const c of [p.c1, p.cmu, p.cs, p.cc]) {
            expect(c).toBeGreaterThan(0);
            expect(c).toBeLessThanOrEqual(1);
          }
          expect(p.c1 + p.cmu).toBeLessThanOrEqual(1 + 1e-15);
          expect(p.damps).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 300 },
    );
  });
});
