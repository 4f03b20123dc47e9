import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CellMetrics, RetrievalOptionsInput, SweepResults } from '@lethe/eval';
import { createTask, emptyResults, validateSweepConfig } from '@lethe/eval';
import {
  formatPolicyManifest,
  POLICY_FORMAT,
  POLICY_FORMAT_VERSION,
  POLICY_MANIFEST,
} from '@lethe/kv-cache';
import { writePolicyDirectory } from '@lethe/model/node';
import { encodeGsaParameters, gsaPolicyContents, initGateParameters } from '@lethe/policies-gsa';
import { TASK_MODEL_FILE, type TaskModelManifest } from '@lethe/task-models';
import { ensureWebGpu } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationRecord } from '../src/generation-record';
import { installShim, lethe, requireBuiltCli, run, timelessRows } from './run-lethe';

let dir: string;
/** A micro arithmetic model trained by `lethe pretrain` in `beforeAll`. */
const MODEL = 'models/arithmetic';
let pretrainOutput: { stdout: string; stderr: string; status: number | null };

const CELL = [
  '--task',
  'arithmetic',
  '--task-options',
  '{"steps":2}',
  '--policy',
  'streaming-llm',
  '--budget',
  '0.5',
  '--seed',
  '0',
  '--examples',
  '3',
  '--checkpoint',
  MODEL,
];

beforeAll(async () => {
  requireBuiltCli();
  dir = await mkdtemp(join(tmpdir(), 'lethe-cli-'));
  pretrainOutput = await lethe(
    [
      'pretrain',
      '--task',
      'arithmetic',
      '--task-option',
      'steps=2',
      '--hidden',
      '16',
      '--layers',
      '2',
      '--heads',
      '2',
      '--kv-heads',
      '1',
      '--intermediate',
      '32',
      '--steps',
      '6',
      '--batch-size',
      '4',
      '--eval-examples',
      '2',
      '--lr',
      '0.02',
      '--out',
      MODEL,
    ],
    dir,
  );
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Metrics without the wall-time fields. */
function deterministic(metrics: CellMetrics): Omit<CellMetrics, 'tokensPerSecond'> {
  const { tokensPerSecond: _, ...rest } = metrics;
  return rest;
}

describe('lethe pretrain', () => {
  it('trains with a progress bar and saves the model, its commands and its score', async () => {
    expect(pretrainOutput.stderr).toMatch(
      /pretrain \[.*\] 6\/6 steps \| loss \d+\.\d+ \| \d+ tok\/s \| ETA/,
    );
    expect(pretrainOutput.status).toBe(0);
    const out = pretrainOutput.stdout;
    expect(out).toMatch(/^saved models\/arithmetic \(.* parameters, final loss \d/m);
    expect(out).toMatch(/^full-cache accuracy on 2 held-out examples \(seed 0\): /m);
    const manifest = JSON.parse(
      await readFile(join(dir, MODEL, TASK_MODEL_FILE), 'utf8'),
    ) as TaskModelManifest;
    expect(out).toContain(`reproduce: ${manifest.evaluation!.command}`);
    expect(out).toContain(`recreate:  ${manifest.command}`);
    expect(manifest.command).toMatch(
      /^lethe pretrain --task arithmetic --task-option steps=2 --hidden 16 /,
    );
    expect(manifest.command).toContain('--steps 6 --batch-size 4 --seed 1 --lr 0.02');
    // The resumable state is removed after success.
    await expect(stat(join(dir, `${MODEL}.state`))).rejects.toThrow(/ENOENT/);
    expect(out).toMatch(/final loss \d\.\d+, .*; \S+ of updates over every session of the run\)/);
  });

  it('prints each validation score above the bar and records them', async () => {
    const { stdout, stderr, status } = await lethe(
      [
        'pretrain',
        '--task',
        'suite',
        '--task-option',
        'member=retrieval-mixture',
        '--task-option',
        'contextChars=256',
        '--hidden',
        '16',
        '--layers',
        '1',
        '--heads',
        '2',
        '--kv-heads',
        '1',
        '--intermediate',
        '32',
        '--steps',
        '3',
        '--batch-size',
        '2',
        '--eval-examples',
        '0',
        '--probe-examples',
        '5',
        '--probe-every',
        '2',
        '--out',
        'models/probed',
      ],
      dir,
    );
    expect(status).toBe(0);
    // Each of the five retrieval members once: the tallies of the mixture's members.
    const members =
      'niah-multi 0/1, niah-multivalue 0/1, variable-tracking 0/1, frequent-words 0/1, two-hop 0/1';
    expect(stderr).toContain(`validation at update 2: 0.0% ± 0.0% (${members})`);
    expect(stderr).toContain(`validation at update 3: 0.0% ± 0.0% (${members})`);
    const manifest = JSON.parse(
      await readFile(join(dir, 'models/probed', TASK_MODEL_FILE), 'utf8'),
    ) as TaskModelManifest;
    expect(manifest.training.probes?.scores.map((p) => p.step)).toEqual([2, 3]);
    expect(manifest.command).toContain('--probe-examples 5 --probe-seed 1 --probe-every 2');
    expect(stdout).toContain(`recreate:  ${manifest.command}`);
  });
});

describe('lethe eval', () => {
  it('prints the table and a reproduce command that recomputes the same metrics', async () => {
    const first = await lethe(['eval', ...CELL, '--results', 'first.json'], dir);
    expect(first.stderr).toMatch(/eval \[.*\] 1\/1 cells \| arithmetic streaming-llm 0\.5 seed 0/);
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^\| task \| policy \| budget \|/m);
    expect(first.stdout).toMatch(/^\| arithmetic \| streaming-llm \| 50% \|/m);
    const command = /^reproduce: (lethe eval .*)$/m.exec(first.stdout)?.[1];
    expect(command).toBeDefined();

    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    await installShim(bin);
    const again = await run('/bin/sh', ['-c', `${command} --results again.json`], {
      cwd: dir,
      env: { PATH: `${bin}:${process.env.PATH}` },
    });
    expect(again.stderr).not.toMatch(/lethe: /);
    expect(again.status).toBe(0);
    const a = JSON.parse(await readFile(join(dir, 'first.json'), 'utf8')) as SweepResults;
    const b = JSON.parse(await readFile(join(dir, 'again.json'), 'utf8')) as SweepResults;
    expect(b.config).toEqual(a.config);
    expect(b.cells.map((c) => c.key)).toEqual(a.cells.map((c) => c.key));
    expect(b.cells.map((c) => c.command)).toEqual([command]);
    expect(deterministic(b.cells[0]!.metrics)).toEqual(deterministic(a.cells[0]!.metrics));
  });

  it('runs a composed cell whose reproduce command recomputes it', async () => {
    const composed = [
      ...CELL.slice(0, 5),
      'h2o+sol-fixed',
      '--policy-options',
      '{"sol-fixed":{"refresh":false}}',
      ...CELL.slice(6),
    ];
    const first = await lethe(['eval', ...composed, '--results', 'composed.json'], dir);
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^\| arithmetic \| h2o\+sol-fixed \| 50% \|/m);
    const command = /^reproduce: (lethe eval .*)$/m.exec(first.stdout)?.[1];
    expect(command).toContain(
      `--policy h2o+sol-fixed --policy-options '{"sol-fixed":{"refresh":false}}'`,
    );
    const bad = await lethe(
      [
        'eval',
        ...composed.slice(0, 6),
        '--policy-options',
        '{"sol-fixed":{"window":3}}',
        ...CELL.slice(6),
      ],
      dir,
    );
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(
      /\[E_ARG\] --policy-options window \(policies\[0\]\.compose\[1\]\.options\.window\)/,
    );
  });

  // Seven lethe processes, two of them pooled sweeps: 5 s alone, past 60 s under CI's full load.
  it('runs a sweep from --config, resumes from --results, and lethe report writes the report', async () => {
    const config = {
      tasks: [{ name: 'arithmetic', options: { steps: 2 } }],
      policies: ['full', 'h2o', 'tova'],
      budgets: [0.5],
      seeds: [0],
      examplesPerCell: 2,
      checkpoints: { arithmetic: MODEL },
    };
    await writeFile(join(dir, 'sweep.json'), JSON.stringify(config));
    const first = await lethe(
      ['eval', '--config', 'sweep.json', '--results', 'sweep-results.json'],
      dir,
    );
    expect(first.status).toBe(0);
    expect(first.stderr).toMatch(/3\/3 cells/);
    for (const policy of ['full', 'h2o', 'tova']) {
      expect(first.stdout).toMatch(new RegExp(`^\\| arithmetic \\| ${policy} \\|`, 'm'));
    }
    const written = await readFile(join(dir, 'sweep-results.json'), 'utf8');
    const resumed = await lethe(
      ['eval', '--config', 'sweep.json', '--results', 'sweep-results.json'],
      dir,
    );
    expect(resumed.status).toBe(0);
    expect(resumed.stderr).toMatch(/\(done before\)/);
    expect(await readFile(join(dir, 'sweep-results.json'), 'utf8')).toBe(written);

    const report = await lethe(
      ['report', '--results', 'sweep-results.json', '--out', 'report'],
      dir,
    );
    expect(report.status).toBe(0);
    expect((await readdir(join(dir, 'report'))).sort()).toEqual([
      'report.html',
      'report.md',
      'results.json',
    ]);
    const markdown = await readFile(join(dir, 'report', 'report.md'), 'utf8');
    expect(markdown).toMatch(/^\| arithmetic \| h2o \|/m);
    // h2o and tova are both heuristics: the better one is the baseline, the other is compared
    // with it on the same 2 examples (McNemar; far too few to tell them apart)
    expect(markdown).toContain('### Against the best heuristic');
    expect(markdown).toMatch(
      /^\| 50% \| (h2o|tova) \| [\d.]+% \| (tova|h2o) \| [\d.]+% \| 2 \| McNemar \(exact\) \| [\d.e-]+ \| [\d.e-]+ \| · not told apart \|$/m,
    );
    expect(first.stdout).toContain('### Against the best heuristic');

    // On two threads: the same table, but the throughput column.
    const pooled = await lethe(['eval', '--config', 'sweep.json', '--threads', '2'], dir);
    expect(pooled.status).toBe(0);
    expect(timelessRows(pooled.stdout, 'arithmetic')).toEqual(
      timelessRows(first.stdout, 'arithmetic'),
    );
    const zero = await lethe(['eval', '--config', 'sweep.json', '--threads', '0'], dir);
    expect(zero.status).toBe(2);
    expect(zero.stderr).toMatch(/\[E_ARG\] --threads/);
  }, 180_000);

  it('runs one task under two labels and averages them in the report with --average-over', async () => {
    const config = {
      tasks: [
        { name: 'arithmetic', label: 'two-steps', options: { steps: 2 } },
        { name: 'arithmetic', label: 'three-steps', options: { steps: 3 } },
      ],
      policies: ['full', 'h2o'],
      budgets: [0.5],
      seeds: [0],
      examplesPerCell: 2,
      checkpoints: { arithmetic: MODEL },
    };
    await writeFile(join(dir, 'labelled.json'), JSON.stringify(config));
    const run = await lethe(
      ['eval', '--config', 'labelled.json', '--results', 'labelled-results.json'],
      dir,
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\| three-steps \| h2o \|/m);
    expect(run.stdout).toContain(`--task-options '{"steps":3}' --task-label three-steps`);
    const report = await lethe(
      [
        'report',
        '--results',
        'labelled-results.json',
        '--out',
        'labelled-report',
        '--average-over',
        'two-steps,three-steps',
      ],
      dir,
    );
    expect(report.status).toBe(0);
    const markdown = await readFile(join(dir, 'labelled-report', 'report.md'), 'utf8');
    expect(markdown.match(/^## .*$/gm)).toEqual([
      '## average of 2 tasks',
      '## two-steps',
      '## three-steps',
      '## All rows',
    ]);
    const bad = await lethe(
      [
        'report',
        '--results',
        'labelled-results.json',
        '--out',
        'r2',
        '--average-over',
        'two-steps,nope',
      ],
      dir,
    );
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/\[E_ARG\] --average-over: "nope": is not a task of the results/);
  });
});

// WebGPU in Node (Dawn over SwiftShader, Debian's chromium) must work in CI (CI=true), so this
// runs and fails with the reason there; elsewhere it is skipped, saying why.
const webGpuMissing = await ensureWebGpu({ required: true }).then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
);
const skipWebGpu = webGpuMissing !== undefined && !process.env.CI;
if (skipWebGpu) console.warn(`[@lethe/cli] WebGPU CLI test skipped: ${webGpuMissing}`);

describe.skipIf(skipWebGpu)('lethe eval --backend webgpu', () => {
  it('runs a cell on WebGPU with the metrics it gets on wasm (the runtime reads asynchronously there)', async () => {
    const wasm = await lethe(['eval', ...CELL, '--results', 'on-wasm.json'], dir);
    const gpu = await lethe(
      ['eval', ...CELL, '--backend', 'webgpu', '--results', 'on-webgpu.json'],
      dir,
    );
    expect(gpu.stderr, gpu.stderr).not.toMatch(/lethe: /);
    expect(gpu.status).toBe(0);
    expect(wasm.status).toBe(0);
    const a = JSON.parse(await readFile(join(dir, 'on-wasm.json'), 'utf8')) as SweepResults;
    const b = JSON.parse(await readFile(join(dir, 'on-webgpu.json'), 'utf8')) as SweepResults;
    expect(deterministic(b.cells[0]!.metrics)).toEqual(deterministic(a.cells[0]!.metrics));
  }, 300_000); // SwiftShader: 20 s here, 80 s in CI beside the other packages' tests
});

/** `lethe generate` of 8 tokens under the GSA gates of `policyDir` at budget 0.4, with `extra` flags. */
function generateGsa(policyDir: string, extra: readonly string[] = []) {
  return lethe(
    [
      'generate',
      '--model',
      MODEL,
      '--policy',
      'gsa',
      '--policy-dir',
      policyDir,
      '--budget',
      '0.4',
      '--prompt',
      'compute: 3 +4 *2\\n',
      '--tokens',
      '8',
      ...extra,
    ],
    dir,
  );
}

describe('a learned policy whose provider uploads tensors when prepared (GSA)', () => {
  it('runs in lethe eval and lethe generate', async () => {
    // A fresh gate for the micro model (hidden 16, 2 layers, 1 KV head): the policy directory the
    // trainer writes. Preparing it uploads the gate, so the CLI must start the backend first.
    const gate = initGateParameters({ layers: 2, hiddenSize: 16, kvHeads: 1 }, 'head', { seed: 3 });
    const policyDir = join(dir, 'gsa-policy');
    await writePolicyDirectory(
      policyDir,
      gsaPolicyContents(gate, { options: { sinks: 1, window: 2 } }),
    );
    const cell = [...CELL];
    cell.splice(cell.indexOf('streaming-llm'), 1, 'gsa', '--policy-dir', 'gsa-policy');
    const evaluated = await lethe(['eval', ...cell], dir);
    expect(evaluated.stderr).not.toMatch(/lethe: /);
    expect(evaluated.status).toBe(0);
    expect(evaluated.stdout).toMatch(/^\| arithmetic \| gsa \| 50% \|/m);
    const generated = await generateGsa('gsa-policy');
    expect(generated.stderr).toBe('');
    expect(generated.status).toBe(0);
    expect(generated.stdout).toMatch(/^policy gsa, budget 0\.4: \d+ entries per KV head/m);
  });

  it('refuses gates trained on another model, naming their policy.json (exit 2), unless transferred', async () => {
    const gate = initGateParameters({ layers: 2, hiddenSize: 16, kvHeads: 1 }, 'head', { seed: 3 });
    const other = `sha256:${'0'.repeat(64)}`; // a model of the same shape, another identity
    await writePolicyDirectory(
      join(dir, 'gsa-other'),
      gsaPolicyContents(gate, { baseModel: other, options: { sinks: 1, window: 2 } }),
    );
    const cell = [...CELL];
    cell.splice(cell.indexOf('streaming-llm'), 1, 'gsa', '--policy-dir', 'gsa-other');
    for (const run of [
      await lethe(['eval', ...cell], dir),
      await lethe(
        [
          'generate',
          '--model',
          MODEL,
          '--policy',
          'gsa',
          '--policy-dir',
          'gsa-other',
          '--prompt',
          'x',
        ],
        dir,
      ),
    ]) {
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(
        /^lethe: \[E_CHECKPOINT\] gsa-other\/policy\.json: is a gsa policy trained on the model sha256:0{12}; .* is sha256:[0-9a-f]{12}/m,
      );
    }
    // Transferred on purpose, they run.
    const transfer = ['--policy-transfer', 'true'];
    const evaluated = await lethe(['eval', ...cell, ...transfer], dir);
    expect(evaluated.stderr).not.toMatch(/lethe: /);
    expect(evaluated.status).toBe(0);
    expect(evaluated.stdout).toMatch(/^\| arithmetic \| gsa \| 50% \|/m);
    expect(evaluated.stdout).toContain(
      '--policy-dir gsa-other --policy-transfer true --budget 0.5',
    );
    const generated = await generateGsa('gsa-other', transfer);
    expect(generated.stderr).toBe('');
    expect(generated.status).toBe(0);
  });
});

describe('lethe generate', () => {
  it('streams the text and shows per layer which tokens the cache holds, without ANSI colours', async () => {
    const out = await lethe(
      [
        'generate',
        '--model',
        MODEL,
        '--policy',
        'streaming-llm',
        '--budget',
        '0.4',
        '--prompt',
        'compute: 3 +4 *2\\n',
        '--tokens',
        '24',
      ],
      dir,
    );
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    expect(out.stdout).not.toContain('\u001b[');
    expect(out.stdout).toMatch(/^policy streaming-llm, budget 0\.4: 17 entries per KV head/m);
    expect(out.stdout).toContain('compute: 3 +4 *2\n');
    const rows = out.stdout.split('\n').filter((line) => /^L\d /.test(line));
    expect(rows).toHaveLength(2);
    for (const [layer, row] of rows.entries()) {
      const match = /^L(\d) (\d+)\/(\d+) │(.*)│$/.exec(row);
      expect(match).not.toBeNull();
      const [, l, held, total, text] = match!;
      expect(Number(l)).toBe(layer);
      expect(Array.from(text!)).toHaveLength(Number(total));
      expect(Array.from(text!).filter((c) => c !== '·')).toHaveLength(Number(held));
      // StreamingLLM keeps the sink (BOS, drawn ^) and the most recent tokens.
      expect(text!.startsWith('^')).toBe(true);
      expect(text).toContain('·');
    }
    expect(out.stdout).toMatch(
      /tok\/s \| finish: \S+ \| live\/peak KV entries per layer: L0 \d+\/\d+ {2}L1 \d+\/\d+/,
    );
  });

  it('generates under a composition, each part under its budget, and shows what it read and asked', async () => {
    const composed = [
      'generate',
      '--model',
      MODEL,
      '--policy',
      'h2o+sol-fixed',
      '--policy-options',
      '{"sol-fixed":{"refresh":false}}',
      '--part-budgets',
      '{"sol-fixed":0.5}',
      '--budget',
      '0.4',
      '--prompt',
      'compute: 3 +4 *2\\n',
      '--tokens',
      '24',
    ];
    const out = await lethe(composed, dir);
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(
      /^policy h2o\+sol-fixed, budget 0\.4: 17 entries per KV head; compute targets tokenKeep 0\.5, mlpInputKeep 0\.5, precision 0\.5 /m,
    );
    expect(out.stdout).toMatch(/eviction rounds [1-9]\d* .*\| compute asked: tokenKeep 0\.\d+/);
    // without refresh: false, SOL's KV refresh cannot run beside H2O
    const refused = await lethe(
      composed.filter((_, i) => i !== 5 && i !== 6),
      dir,
    );
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(
      /\[E_ARG\] sets\[1\]\.compute\.refreshEvery: sol-fixed refreshes its KV entries every 16 steps, which cannot run beside h2o's eviction policy/,
    );
  });

  it('reads prompts from stdin until EOF when no --prompt is given', async () => {
    const out = await lethe(
      [
        'generate',
        '--model',
        MODEL,
        '--policy',
        'h2o',
        '--budget',
        '0.5',
        '--tokens',
        '8',
        '--per-head',
      ],
      dir,
      'compute: 5 -2\\n\ncompute: 9 /3\\n\n',
    );
    expect(out.status).toBe(0);
    expect(out.stdout.match(/^KV cache after \d+ tokens/gm)).toHaveLength(2);
    expect(out.stdout.match(/^L0\.h0 /gm)).toHaveLength(2);
  });
});

describe('lethe generate --json', () => {
  /** The retrieval task model at the repository root. */
  const RETRIEVAL = fileURLToPath(new URL('../../../models/retrieval', import.meta.url));
  const FIELDS = [
    'model',
    'task',
    'policy',
    'budget',
    'budgets',
    'fullCacheLength',
    'prompt',
    'promptTokens',
    'text',
    'tokens',
    'finishReason',
    'livePerLayer',
    'peakPerLayer',
    'livePerHead',
    'evictionRounds',
    'held',
    'reads',
    'compute',
    'tokensPerSecond',
  ];
  let manifest: TaskModelManifest;
  /** Held-out examples (seed 0) of the model's task: prompt, as `--prompt` text, and target. */
  let prompts: { text: string; flag: string; target: string }[];

  beforeAll(async () => {
    manifest = JSON.parse(
      await readFile(join(RETRIEVAL, TASK_MODEL_FILE), 'utf8'),
    ) as TaskModelManifest;
    const task = createTask('retrieval', manifest.task.options as RetrievalOptionsInput);
    prompts = [1, 2].map((index) => {
      const { prompt: text, target } = task.example(0, index);
      return { text, flag: text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n'), target };
    });
  });

  /** The JSON lines of `stdout`: every line must be one, and nothing else is there. */
  function records(stdout: string): GenerationRecord[] {
    expect(stdout).not.toContain('\u001b[');
    expect(stdout.endsWith('\n')).toBe(true);
    return stdout
      .slice(0, -1)
      .split('\n')
      .map((line) => {
        const record = JSON.parse(line) as GenerationRecord;
        expect(Object.keys(record)).toEqual(FIELDS);
        return record;
      });
  }

  /** Tokens the cache saw: the prompt, then every generated token but the last. */
  const fedOf = (r: GenerationRecord) => r.promptTokens + r.tokens.length - 1;

  /** Checks the holdings: per head, ascending distinct positions fed, as many as it holds. */
  function expectConsistentHoldings(r: GenerationRecord): void {
    const { layers, kvHeads } = manifest.model;
    const fed = fedOf(r);
    expect(r.held).toHaveLength(layers);
    expect(r.livePerHead).toHaveLength(layers);
    for (let l = 0; l < layers; l++) {
      expect(r.held[l]).toHaveLength(kvHeads);
      expect(r.livePerHead[l]).toHaveLength(kvHeads);
      for (let h = 0; h < kvHeads; h++) {
        const held = r.held[l]![h]!;
        expect(held.length).toBe(r.livePerHead[l]![h]);
        expect(
          held.every(
            (p, i) => Number.isInteger(p) && p >= 0 && p < fed && (i === 0 || p > held[i - 1]!),
          ),
        ).toBe(true);
      }
      // cache.stats(): live entries per layer summed over its KV heads
      expect(r.livePerLayer[l]).toBe(r.livePerHead[l]!.reduce((a, b) => a + b, 0));
      expect(r.peakPerLayer[l]).toBeGreaterThanOrEqual(r.livePerLayer[l]!);
    }
  }

  it('prints one JSON line with the text, counts and holdings the text output shows', async () => {
    const flags = ['generate', '--model', RETRIEVAL, '--policy', 'h2o', '--budget', '0.25'];
    const [shown, json] = await Promise.all([
      lethe([...flags, '--prompt', prompts[0]!.flag], dir),
      lethe([...flags, '--prompt', prompts[0]!.flag, '--json'], dir),
    ]);
    expect(shown.stderr).toBe('');
    expect(json.stderr).toBe('');
    expect(shown.status).toBe(0);
    expect(json.status).toBe(0);
    const all = records(json.stdout);
    expect(all).toHaveLength(1);
    const r = all[0]!;
    const out = shown.stdout;
    const policy =
      /^policy h2o, budget 0\.25: (\d+) entries per KV head \(full-cache length (\d+) = prompt (\d+) \+ \d+ tokens\)\n\n/m.exec(
        out,
      );
    expect(policy).not.toBeNull();
    const [line, capacity, full, promptTokens] = policy!;
    expect(r).toMatchObject({
      model: RETRIEVAL,
      task: 'retrieval',
      policy: 'h2o',
      budget: 0.25,
      budgets: [{ capacity: Number(capacity) }],
      fullCacheLength: Number(full),
      prompt: prompts[0]!.text,
      promptTokens: Number(promptTokens),
    });
    // the streamed text: after the prompt, up to the blank line before the holdings
    const textStart = policy!.index + line.length;
    expect(out.slice(textStart, textStart + r.prompt.length)).toBe(r.prompt);
    const streamed = out.slice(textStart + r.prompt.length, out.lastIndexOf('\n\nKV cache after '));
    expect(r.text).toBe(streamed);
    expect(r.text).not.toBe('');
    const fed = Number(/^KV cache after (\d+) tokens/m.exec(out)?.[1]);
    expect(fedOf(r)).toBe(fed);
    expect(r.tokens.every((t) => Number.isInteger(t) && t >= 0)).toBe(true);
    const stats =
      /^[\d.]+ tok\/s \| finish: (\S+) \| live\/peak KV entries per layer: (.+) \| eviction rounds (\d+)$/m.exec(
        out,
      );
    expect(stats).not.toBeNull();
    const [, finish, layers, rounds] = stats!;
    expect(r.finishReason).toBe(finish);
    expect(r.evictionRounds).toBe(Number(rounds));
    expect(r.evictionRounds).toBeGreaterThan(0);
    const perLayer = layers!.split('  ').map((l) => /^L\d+ (\d+)\/(\d+)$/.exec(l)!);
    expect(r.livePerLayer).toEqual(perLayer.map((m) => Number(m[1])));
    expect(r.peakPerLayer).toEqual(perLayer.map((m) => Number(m[2])));
    expectConsistentHoldings(r);
    for (const heads of r.livePerHead) {
      for (const live of heads) expect(live).toBeLessThanOrEqual(Number(capacity));
    }
    // a layer row draws the positions some KV head of the layer holds
    const rows = out.split('\n').filter((row) => /^L\d /.test(row));
    expect(rows).toHaveLength(manifest.model.layers);
    rows.forEach((row, l) => {
      const [, held, total, text] = /^L\d+ (\d+)\/(\d+) │(.*)│$/.exec(row)!;
      const drawn = Array.from(text!).flatMap((glyph, p) => (glyph === '·' ? [] : [p]));
      const union = [...new Set(r.held[l]!.flat())].sort((a, b) => a - b);
      expect(union).toEqual(drawn);
      expect(union).toHaveLength(Number(held));
      expect(Number(total)).toBe(fed);
    });
    // no read selector, no compute policy
    expect(r.reads.live).toBeGreaterThan(0);
    expect(r.reads.entries).toBe(r.reads.live);
    expect(r.compute).toBeNull();
    expect(r.tokensPerSecond).toBeGreaterThan(0);
  });

  it('prints one line per stdin prompt, the same as for --prompt, and errors on stderr', async () => {
    const flags = [
      'generate',
      '--model',
      RETRIEVAL,
      '--policy',
      'streaming-llm',
      '--budget',
      '0.5',
      '--json',
    ];
    const [piped, single] = await Promise.all([
      lethe(flags, dir, `${prompts[0]!.flag}\nWHAT?\n\n${prompts[1]!.flag}\n`),
      lethe([...flags, '--prompt', prompts[1]!.flag], dir),
    ]);
    expect(piped.status).toBe(0);
    expect(piped.stderr).toMatch(
      /^lethe: \[E_ARG\] --prompt: character "W" is not in the model's alphabet "[^"]+"\n$/,
    );
    const lines = records(piped.stdout);
    expect(lines.map((r) => r.prompt)).toEqual(prompts.map((p) => p.text));
    for (const r of lines) {
      expectConsistentHoldings(r);
      // StreamingLLM: every head keeps the sink and the newest token
      for (const heads of r.held) {
        for (const held of heads) {
          expect(held[0]).toBe(0);
          expect(held.at(-1)).toBe(fedOf(r) - 1);
        }
      }
    }
    const { tokensPerSecond: _a, ...second } = lines[1]!;
    const { tokensPerSecond: _b, ...alone } = records(single.stdout)[0]!;
    expect(second).toEqual(alone);
  });

  it('shows every KV head holding every position fed under the full cache', async () => {
    const out = await lethe(
      ['generate', '--model', RETRIEVAL, '--prompt', prompts[1]!.flag, '--json'],
      dir,
    );
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    const [r, ...more] = records(out.stdout);
    expect(more).toHaveLength(0);
    expect(r).toMatchObject({ policy: 'full', budget: 1, evictionRounds: 0, compute: null });
    expect(r!.budgets).toEqual([{ capacity: r!.fullCacheLength }]);
    expect(r!.text).toBe(prompts[1]!.target); // this held-out example, answered right
    expect(r!.finishReason).toBe('stop-sequence');
    const fed = fedOf(r!);
    const all = Array.from({ length: fed }, (_, p) => p);
    const { layers, kvHeads } = manifest.model;
    expect(r!.held).toEqual(Array.from({ length: layers }, () => Array(kvHeads).fill(all)));
    expect(r!.livePerHead).toEqual(Array.from({ length: layers }, () => Array(kvHeads).fill(fed)));
    expect(r!.livePerLayer).toEqual(Array(layers).fill(fed * kvHeads));
    expect(r!.peakPerLayer).toEqual(r!.livePerLayer);
    expect(r!.reads.entries).toBe(r!.reads.live);
  });
});

describe('lethe generate on Hugging Face directories', () => {
  const fixture = (name: string) =>
    fileURLToPath(new URL(`../../../fixtures/hf/${name}`, import.meta.url));

  it('generates from tiny-qwen2 (one F16 file) and tiny-llama (BF16 shards)', async () => {
    const qwen = await lethe(
      ['generate', '--model', fixture('tiny-qwen2'), '--prompt', 'hi', '--tokens', '4'],
      dir,
    );
    expect(qwen.stderr).toBe('');
    expect(qwen.status).toBe(0);
    expect(qwen.stdout).toMatch(/2 layers, hidden 32, 4 query \/ 2 KV heads/);
    expect(qwen.stdout).toMatch(
      /^policy full: no eviction \(full-cache length 6 = prompt 2 \+ 4 tokens\)/m,
    );
    expect(qwen.stdout).toMatch(/tok\/s \| finish: \S+ \| live\/peak KV entries per layer: L0/);
    const llama = await lethe(
      [
        'generate',
        '--model',
        fixture('tiny-llama'),
        '--policy',
        'streaming-llm',
        '--budget',
        '0.5',
        '--prompt',
        'The cache keeps',
        '--tokens',
        '12',
      ],
      dir,
    );
    expect(llama.stderr).toBe('');
    expect(llama.status).toBe(0);
    // The prompt starts with <|begin_of_text|>, drawn ^, which StreamingLLM keeps as its sink.
    const rows = llama.stdout.split('\n').filter((line) => /^L\d /.test(line));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(/│\^The cache/);
  });
});

describe('bad input', () => {
  const cases: [string, string[], RegExp][] = [
    [
      'unknown task',
      ['eval', ...CELL.slice(0, 1), 'nope', ...CELL.slice(2)],
      /--task \(tasks\[0\]\.name\): unknown task "nope"; valid tasks: countdown, retrieval, arithmetic, lm/,
    ],
    [
      'unknown policy',
      ['eval', ...CELL.slice(0, 5), 'nope', ...CELL.slice(6)],
      /--policy \(policies\[0\]\.name\): unknown policy "nope"; valid policies: full, streaming-llm, h2o, snapkv/,
    ],
    [
      'budget above 1',
      ['eval', ...CELL.slice(0, 7), '1.5', ...CELL.slice(8)],
      /\[E_BUDGET\] --budget \(budgets\[0\]\): must be a number in \(0, 1\], got 1\.5/,
    ],
    [
      'missing checkpoint',
      ['eval', ...CELL.slice(0, -1), 'models/missing'],
      /\[E_CHECKPOINT\] models\/missing: cannot be read: no such file or directory/,
    ],
    [
      'malformed sweep config',
      ['eval', '--config', 'bad-sweep.json'],
      /\[E_BUDGET\] bad-sweep\.json: budgets\[1\]: must be a number in \(0, 1\], got 0/,
    ],
    [
      'policy directory not there',
      ['eval', ...CELL.slice(0, 5), 'gsa', '--policy-dir', 'policy-typo', ...CELL.slice(6)],
      /lethe: \[E_CHECKPOINT\] policy-typo\/policy\.json: cannot be read: no such file or directory \(ENOENT\)$/m,
    ],
    [
      'policy directory without its tensors',
      ['eval', ...CELL.slice(0, 5), 'gsa', '--policy-dir', 'policy-no-tensors', ...CELL.slice(6)],
      /lethe: \[E_CHECKPOINT\] policy-no-tensors\/gates\.safetensors: cannot be read: no such file or directory \(ENOENT\)$/m,
    ],
    [
      'policy directory whose tensors file is a directory',
      ['eval', ...CELL.slice(0, 5), 'gsa', '--policy-dir', 'policy-dir-tensors', ...CELL.slice(6)],
      /lethe: \[E_CHECKPOINT\] policy-dir-tensors\/gates\.safetensors: cannot be read: is a directory, expected a file \(EISDIR\)$/m,
    ],
    [
      'a bad option in policy.json, named there',
      ['eval', ...CELL.slice(0, 5), 'gsa', '--policy-dir', 'policy-bad-option', ...CELL.slice(6)],
      /lethe: \[E_ARG\] policy-bad-option\/policy\.json: options\.window: .*-2/m,
    ],
    [
      'the same option overridden by --policy-options, named there',
      [
        ...[
          'eval',
          ...CELL.slice(0, 5),
          'gsa',
          '--policy-dir',
          'policy-bad-option',
          ...CELL.slice(6),
        ],
        '--policy-options',
        '{"window":-3}',
      ],
      /lethe: \[E_ARG\] --policy-options window \(policies\[0\]\.options\.window\): .*-3/m,
    ],
    [
      'generate: unknown policy',
      ['generate', '--model', MODEL, '--policy', 'nope', '--prompt', 'x'],
      /--policy: unknown policy "nope"; valid policies: full, streaming-llm, h2o, snapkv, .*, ngc/,
    ],
    [
      'generate: budget 0',
      ['generate', '--model', MODEL, '--policy', 'h2o', '--budget', '0', '--prompt', 'x'],
      /\[E_BUDGET\] --budget: must be a number in \(0, 1\], got 0/,
    ],
    [
      'generate: missing weights',
      ['generate', '--model', 'broken', '--policy', 'h2o', '--budget', '0.5', '--prompt', 'x'],
      /\[E_CHECKPOINT\] broken\/model\.safetensors: is missing, and so is model\.safetensors\.index\.json/,
    ],
    [
      'pretrain: unknown task',
      ['pretrain', '--task', 'nope'],
      /--task \(task\): unknown task "nope"; valid names: countdown, retrieval, arithmetic, lm/,
    ],
    [
      'pretrain: bad size',
      ['pretrain', '--task', 'arithmetic', '--hidden', '30', '--heads', '4'],
      /--heads \(modelSize\.heads\): must divide hidden/,
    ],
    [
      'report: unreadable results',
      ['report', '--results', 'none.json', '--out', 'r'],
      /none\.json: cannot be read/,
    ],
  ];
  /** Results files and report directories that cannot be used, numbers not written in decimal. */
  const fileAndNumberCases: [string, string[], RegExp][] = [
    [
      'eval: --results is a directory',
      ['eval', '--config', 'good-sweep.json', '--results', 'results-dir'],
      /lethe: \[E_ARG\] --results \(results-dir\): cannot be read: is a directory, expected a file \(EISDIR\)$/m,
    ],
    [
      'eval: --results holds a cell without metrics',
      ['eval', '--config', 'good-sweep.json', '--results', 'bad-cell.json'],
      /lethe: \[E_FORMAT\] --results \(bad-cell\.json\): cells\[0\] \(arithmetic full 1 seed 0\): metrics\.meanLive must be an aggregate/m,
    ],
    [
      'report: --out is a file',
      ['report', '--results', 'good-results.json', '--out', 'good-sweep.json'],
      /lethe: \[E_ARG\] --out \(good-sweep\.json\): cannot be written: EEXIST/m,
    ],
    [
      'eval: hexadecimal budget',
      ['eval', ...CELL.slice(0, 7), '0x1', ...CELL.slice(8)],
      /lethe: \[E_ARG\] --budget: must be a decimal number, got "0x1"$/m,
    ],
    [
      'eval: budget abc',
      ['eval', ...CELL.slice(0, 7), 'abc', ...CELL.slice(8)],
      /lethe: \[E_ARG\] --budget: must be a decimal number, got "abc"$/m,
    ],
    [
      'eval: blank seed',
      ['eval', ...CELL.slice(0, 9), ' ', ...CELL.slice(10)],
      /lethe: \[E_ARG\] --seed: must be a decimal number, got " "$/m,
    ],
    [
      'eval: empty examples',
      ['eval', ...CELL.slice(0, 11), '', ...CELL.slice(12)],
      /lethe: \[E_ARG\] --examples: must be a decimal number, got ""$/m,
    ],
    [
      'eval: padded pass@k',
      ['eval', ...CELL, '--samples', '2', '--temperature', '1', '--pass-at-k', '1, 2'],
      /lethe: \[E_ARG\] --pass-at-k: must be a decimal number, got " 2"$/m,
    ],
    [
      'eval: hexadecimal temperature',
      ['eval', ...CELL, '--temperature', '0x0'],
      /lethe: \[E_ARG\] --temperature: must be a decimal number, got "0x0"$/m,
    ],
    [
      'generate: budget abc',
      ['generate', '--model', MODEL, '--policy', 'h2o', '--budget', 'abc', '--prompt', 'x'],
      /lethe: \[E_ARG\] --budget: must be a decimal number, got "abc"$/m,
    ],
    [
      'generate: hexadecimal budget',
      ['generate', '--model', MODEL, '--policy', 'h2o', '--budget', '0x1', '--prompt', 'x'],
      /lethe: \[E_ARG\] --budget: must be a decimal number, got "0x1"$/m,
    ],
    [
      'generate: empty seed',
      ['generate', '--model', MODEL, '--seed', '', '--prompt', 'x'],
      /lethe: \[E_ARG\] --seed: must be a decimal number, got ""$/m,
    ],
    [
      'generate: hexadecimal tokens',
      ['generate', '--model', MODEL, '--tokens', '0x10', '--prompt', 'x'],
      /lethe: \[E_ARG\] --tokens: must be a decimal number, got "0x10"$/m,
    ],
    [
      'generate: negative temperature',
      ['generate', '--model', MODEL, '--temperature', '-1', '--prompt', 'x'],
      /lethe: \[E_ARG\] --temperature: .*≥ 0.*-1$/m,
    ],
    [
      'generate: infinite temperature',
      ['generate', '--model', MODEL, '--temperature', '1e999', '--prompt', 'x'],
      /lethe: \[E_ARG\] --temperature: must be a decimal number, got "1e999"$/m,
    ],
    [
      'pretrain: hexadecimal --checkpoint-every',
      ['pretrain', '--task', 'arithmetic', '--checkpoint-every', '0x10'],
      /lethe: \[E_ARG\] --checkpoint-every: must be a decimal number, got "0x10"$/m,
    ],
  ];

  beforeAll(async () => {
    await writeFile(
      join(dir, 'bad-sweep.json'),
      JSON.stringify({
        tasks: ['arithmetic'],
        policies: ['h2o'],
        budgets: [0.5, 0],
        seeds: [0],
        examplesPerCell: 1,
      }),
    );
    const goodSweep = {
      tasks: [{ name: 'arithmetic', options: { steps: 2 } }],
      policies: ['full'],
      budgets: [0.5],
      seeds: [0],
      examplesPerCell: 1,
      checkpoints: { arithmetic: MODEL },
    };
    await writeFile(join(dir, 'good-sweep.json'), JSON.stringify(goodSweep));
    await mkdir(join(dir, 'results-dir'), { recursive: true });
    const cell = {
      key: { task: 'arithmetic', policy: 'full', budget: 1, seed: 0 },
      metrics: {},
      command: 'lethe eval …',
      elapsedMs: 1,
    };
    const document = (cells: unknown[]) =>
      JSON.stringify({ ...emptyResults(validateSweepConfig(goodSweep)), cells });
    await writeFile(join(dir, 'bad-cell.json'), document([cell]));
    const aggregate = { mean: 1, stderr: 0, n: 1 };
    await writeFile(
      join(dir, 'good-results.json'),
      document([
        {
          ...cell,
          metrics: {
            accuracy: aggregate,
            peakKvReduction: aggregate,
            meanLive: aggregate,
            peakLive: aggregate,
            netKeepRate: aggregate,
            realisedBudget: aggregate,
            tokensPerSecond: aggregate,
          },
          sequences: [{ example: 0, correct: true, peakTotal: 8, generated: 3 }],
        },
      ]),
    );
    // policy directories of a GSA gate for the micro model: without the tensors file, with a
    // directory in its place, with a bad option in the manifest
    const gate = encodeGsaParameters(
      initGateParameters({ layers: 2, hiddenSize: 16, kvHeads: 1 }, 'head', { seed: 3 }),
    );
    const manifest = (options: Record<string, unknown>) =>
      formatPolicyManifest({
        format: POLICY_FORMAT,
        version: POLICY_FORMAT_VERSION,
        provider: 'gsa',
        options,
        parameters: { ...gate.parameters },
      });
    for (const name of ['policy-no-tensors', 'policy-dir-tensors', 'policy-bad-option']) {
      await mkdir(join(dir, name), { recursive: true });
      const bad = name === 'policy-bad-option';
      await writeFile(join(dir, name, POLICY_MANIFEST), manifest(bad ? { window: -2 } : {}));
    }
    await mkdir(join(dir, 'policy-dir-tensors', gate.parameters.tensors), { recursive: true });
    await writeFile(join(dir, 'policy-bad-option', gate.parameters.tensors), gate.tensors);
    await mkdir(join(dir, 'broken'), { recursive: true });
    for (const file of ['config.json', 'tokenizer.json', TASK_MODEL_FILE]) {
      await writeFile(join(dir, 'broken', file), await readFile(join(dir, MODEL, file)));
    }
  });

  async function expectBadInput(table: readonly [string, string[], RegExp][]): Promise<void> {
    const runs = await Promise.all(table.map(([, args]) => lethe(args, dir)));
    runs.forEach((result, i) => {
      const [name, , pattern] = table[i]!;
      expect(`${name}: ${result.stderr}`).toMatch(pattern);
      expect(result.status, name).toBe(2);
      expect(result.stderr, name).not.toMatch(/^\s+at /m);
    });
  }

  it('exits with status 2 and one line naming the problem, without a stack', async () => {
    await expectBadInput(cases);
  });

  it('names the flag of an unusable results file or report directory, and quotes numbers not written in decimal', async () => {
    await expectBadInput(fileAndNumberCases);
  });
});
