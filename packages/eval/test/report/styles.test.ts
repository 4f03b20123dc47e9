import { FULL_CACHE } from '@lethe/kv-cache';
import { describe, expect, it } from 'vitest';
import { policyStyles } from '../../src/report/styles';

describe('policyStyles', () => {
  it('gives every policy its own colour and marker pair, up to a hundred, and the full cache its own', () => {
    const policies = [FULL_CACHE, ...Array.from({ length: 100 }, (_, i) => `policy-${i}`)];
    const styles = policyStyles(policies);
    expect(styles.get(FULL_CACHE)).toEqual({ color: '#000000', dash: '6 4', marker: 'circle' });
    const pairs = policies.slice(1).map((p) => `${styles.get(p)!.color} ${styles.get(p)!.marker}`);
    expect(new Set(pairs).size).toBe(100);
    // the first ten differ in colour and in marker
    const first = policies.slice(1, 11).map((p) => styles.get(p)!);
    expect(new Set(first.map((s) => s.color)).size).toBe(10);
    expect(new Set(first.map((s) => s.marker)).size).toBe(10);
    // the eleventh (the main job has more than ten series) shares a colour, not a marker
    const [one, eleven] = [styles.get('policy-0')!, styles.get('policy-10')!];
    expect(eleven.color).toBe(one.color);
    expect(eleven.marker).not.toBe(one.marker);
    expect(eleven.dash).not.toBe(one.dash);
  });

  it('styles a repeated policy once, in first-appearance order', () => {
    const styles = policyStyles(['h2o', 'snapkv', 'h2o']);
    expect([...styles.keys()]).toEqual(['h2o', 'snapkv']);
  });
});
