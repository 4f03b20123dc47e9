import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, expect, it } from 'vitest';
import { guardRunSettings, RUN_SETTINGS_FILE } from '../../src/harness/node';

const root = mkdtempSync(join(tmpdir(), 'run-settings-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('records a run’s settings, refuses others, and lets an extendable setting only grow', async () => {
  const out = join(root, 'run');
  const settings = { lr: 0.001, updates: 10, actions: { tokenKeep: [0.1, 1] } };
  const file = join(out, RUN_SETTINGS_FILE);
  mkdirSync(out);
  await guardRunSettings(out, settings, { extendable: ['updates'] });
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(settings);
  await guardRunSettings(out, settings, { extendable: ['updates'] });
  await expectLetheRejection(guardRunSettings(out, { ...settings, lr: 0.002 }), 'E_ARG', out);
  await expectLetheRejection(
    guardRunSettings(out, { ...settings, actions: { tokenKeep: [0.1] } }),
    'E_ARG',
    out,
  );
  // Without the option a larger value is another run; with it, it continues this one.
  await expectLetheRejection(guardRunSettings(out, { ...settings, updates: 20 }), 'E_ARG', out);
  await guardRunSettings(out, { ...settings, updates: 20 }, { extendable: ['updates'] });
  expect(JSON.parse(readFileSync(file, 'utf8')).updates).toBe(20);
  await expectLetheRejection(
    guardRunSettings(out, { ...settings, updates: 15 }, { extendable: ['updates'] }),
    'E_ARG',
    out,
  );
  // An optional setting is part of the run too: left out, or added, it is another run.
  const { lr: _, ...withoutLr } = { ...settings, updates: 20 };
  const missing = await expectLetheRejection(guardRunSettings(out, withoutLr), 'E_ARG', out);
  expect(missing.message).toMatch(/with lr 0\.001, not \(none\)/);
  await expectLetheRejection(
    guardRunSettings(out, { ...settings, updates: 20, eviction: [0.5] }),
    'E_ARG',
    out,
  );
  writeFileSync(file, '{ not json');
  await expectLetheRejection(guardRunSettings(out, settings), 'E_FORMAT', file);
});
