import { posix } from 'node:path';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { policyModelDirectory } from '../src/policy-model-directory';

describe('policyModelDirectory', () => {
  it('resolves the model of a URL directory as a relative URL, to a directory URL', () => {
    for (const [dir, model, joined] of [
      ['https://example.test/models/ngc', '../countdown', 'https://example.test/models/countdown/'],
      [
        'https://example.test/models/ngc/',
        '../countdown',
        'https://example.test/models/countdown/',
      ],
      [
        'https://example.test/models/countdown-ngc',
        '.',
        'https://example.test/models/countdown-ngc/',
      ],
      [
        'https://example.test/models/countdown-ngc/',
        '.',
        'https://example.test/models/countdown-ngc/',
      ],
      [
        'https://example.test/models/countdown-ngc',
        './',
        'https://example.test/models/countdown-ngc/',
      ],
      ['https://example.test/policies/ngc', 'model', 'https://example.test/policies/ngc/model/'],
      ['https://example.test/a/b', '../../../c', 'https://example.test/c/'],
      ['https://example.test/models/ngc?v=2#x', '.', 'https://example.test/models/ngc/'],
      ['file:///srv/models/ngc', '../countdown', 'file:///srv/models/countdown/'],
    ] as const) {
      expect(policyModelDirectory(dir, model), `${dir} + ${model}`).toBe(joined);
    }
  });

  it('joins the model of a path directory POSIX-style, as path.posix.join would', () => {
    for (const [dir, model, joined] of [
      ['models/namm-retrieval', '../countdown', 'models/countdown'],
      ['models/countdown-ngc', '.', 'models/countdown-ngc'],
      ['models/countdown-ngc/', './', 'models/countdown-ngc'],
      ['./models//ngc', 'sub/./model', 'models/ngc/sub/model'],
      ['/srv/models/ngc', '../../x', '/srv/x'],
      ['/a', '../../..', '/'],
      ['a', '../../b', '../b'],
      ['a', '..', '.'],
      ['', 'model', 'model'],
      ['C:/models/ngc', '../countdown', 'C:/models/countdown'],
    ] as const) {
      const expected = posix.join(dir, model);
      expect(policyModelDirectory(dir, model), `${dir} + ${model}`).toBe(joined);
      expect(joined).toBe(expected.length > 1 ? expected.replace(/\/$/, '') : expected);
    }
  });

  it('refuses a URL a directory cannot be resolved against', () => {
    const error = expectLetheError(() => policyModelDirectory('mailto:someone@example.test', '.'));
    expect([error.code, error.argument]).toEqual(['E_ARG', 'dir']);
  });
});
