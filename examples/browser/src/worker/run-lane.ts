import { LetheError } from '@lethe/core';
import {
  encodePrompt,
  fullCacheLength,
  policyParts,
  sequenceBudget,
  type TaskExample,
} from '@lethe/eval';
import { DeviceKVCache } from '@lethe/kernels-webgpu';
import { describeBudget, KVCache, type KVCacheStore } from '@lethe/kv-cache';
import {
  checkPolicyBaseModel,
  DecodeStream,
  generate,
  policyContextOf,
  releaseCache,
  tokenGlyphs,
} from '@lethe/model';
import type { PolicyStore } from '@lethe/policies';
import type { LanePolicy } from './lane-policy';
import type { LoadedModel } from './loaded-model';
import { MemoryRecorder } from './memory-recorder';
import type { LaneResult, LaneStart, StepSnapshot } from './protocol';

/** Generated tokens when neither the page nor a task bounds them (as `lethe generate`). */
const DEFAULT_NEW_TOKENS = 200;

/** One lane's generation: what it runs and where its events go. */
export interface LaneRun {
  /** The page's model (a learned part that brings its own, NGC's, replaces it). */
  readonly loaded: LoadedModel;
  readonly policy: LanePolicy;
  readonly store: PolicyStore;
  readonly budget: number;
  readonly prompt: string;
  /** Wrap it as a user message in the model's chat template. */
  readonly chat: boolean;
  /** The task example the prompt was drawn from, for the verifier's verdict. */
  readonly example: TaskExample | undefined;
  readonly seed: number;
  readonly temperature: number;
  readonly maxNewTokens: number | undefined;
  readonly backend: string;
  readonly onStart: (start: LaneStart) => void;
  readonly onText: (text: string) => void;
  readonly onStep: (step: StepSnapshot) => void;
}

/**
 * Generates as `lethe generate` does — the same prompt encoding, full-cache length, per-part
 * budgets, prompt conditioning, stop conditions and `generate()` call — while recording what the
 * cache holds before every prefill chunk, before every decode step and after the last.
 *
 * @throws LetheError `E_ARG` naming `prompt` for a character outside a character tokenizer's
 *   alphabet; `E_CHECKPOINT` when a learned part was trained on another model; the budget's and
 *   the policy's errors.
 */
export async function runLane(run: LaneRun): Promise<Omit<LaneResult, 'tensors'>> {
  const { policy } = run.policy;
  const owner = run.policy.directories.findIndex(
    (d, i) => d !== undefined && policy.parts[i]!.model !== undefined,
  );
  const own =
    owner < 0
      ? undefined
      : await run.store.loadModel(run.policy.directories[owner]!.dir, policy.parts[owner]!.model!);
  const model = own?.model ?? run.loaded.model;
  const tokenizer = own?.tokenizer ?? run.loaded.tokenizer;
  const eosTokenIds = own === undefined ? run.loaded.eosTokenIds : [tokenizer.eosId!];
  const task = run.loaded.task;
  let caches: readonly KVCacheStore[] = [];
  try {
    for (const part of run.policy.directories) {
      if (part !== undefined)
        await checkPolicyBaseModel(part.directory, model, run.loaded.location);
    }
    const typed = run.chat ? chatPrompt(run.loaded, run.prompt) : run.prompt;
    // a rendered template writes its special tokens (BOS among them) as text
    const encode = (text: string) =>
      run.chat ? tokenizer.encode(text) : encodePrompt(tokenizer, text, 'prompt');
    const typedIds = encode(typed);
    const maxNewTokens =
      run.maxNewTokens ?? (task?.kind === 'generation' ? task.maxNewTokens : DEFAULT_NEW_TOKENS);
    const fullLength = fullCacheLength(typedIds.length, maxNewTokens);
    const partBudgets = policyParts(run.policy.spec).map((part) => part.budget);
    const budgets = policy.parts.map((part, i) =>
      sequenceBudget(partBudgets[i] ?? run.budget, fullLength, null, part.budgetForms),
    );
    const { prompt: conditioning, ...policies } = policy.build(budgets, policyContextOf(model, 1));
    const prompted = conditioning === undefined ? typed : conditioning.text(typed);
    const prompt = conditioning === undefined ? typedIds : encode(prompted);
    const { num_hidden_layers: layers, num_key_value_heads: kvHeads } = model.config;
    run.onStart({
      policy: policy.name,
      budgets: budgets.map(describeBudget),
      prompt: prompted,
      promptTokens: prompt.length,
      fullCacheLength: fullLength,
      layers,
      kvHeads,
    });
    const recorder = new MemoryRecorder();
    const stream = new DecodeStream(tokenizer, { skipSpecialTokens: true });
    const generated: number[] = [];
    let text = '';
    let fedGlyphs = 0;
    let firstTokenMs = Number.NaN;
    const started = performance.now();
    /** Glyphs of the positions fed since the last snapshot. */
    const newGlyphs = (fed: number): string[] => {
      // only the new positions: the prompt's, then generated tokens' (no copy of the whole run)
      const ids = Array.from({ length: fed - fedGlyphs }, (_, i) => {
        const position = fedGlyphs + i;
        return position < prompt.length ? prompt[position]! : generated[position - prompt.length]!;
      });
      fedGlyphs = fed;
      return tokenGlyphs(tokenizer, ids);
    };
    const result = await generate({
      model,
      prompts: [prompt],
      streamIds: [0],
      maxNewTokens,
      eviction: policies.eviction,
      ceiling: policies.ceiling,
      readSelector: policies.readSelector,
      compute: policies.compute,
      sampling: { temperature: run.temperature },
      seed: run.seed,
      stop: {
        eosTokenIds,
        stopSequences:
          task?.kind === 'generation' && task.stopText !== ''
            ? [tokenizer.encode(task.stopText)]
            : [],
      },
      onEvictionRound: (event) => recorder.round(event),
      onPrefillChunk: (event) => {
        if (event.start > 0)
          run.onStep(recorder.snapshot(event.caches[0]!, newGlyphs(event.start)));
      },
      onStep: (event) => {
        const fed = prompt.length + generated.length - 1;
        run.onStep(recorder.snapshot(event.caches[0]!, newGlyphs(fed)));
      },
      onToken: (event) => {
        if (generated.length === 0) firstTokenMs = performance.now() - started;
        generated.push(event.token);
        const piece = stream.step(event.token);
        text += piece;
        if (piece !== '') run.onText(piece);
        return true;
      },
    });
    caches = result.caches;
    const tail = stream.flush();
    text += tail;
    if (tail !== '') run.onText(tail);
    const cache = result.caches[0]!;
    const fed = prompt.length + generated.length - 1;
    run.onStep(recorder.snapshot(cache, newGlyphs(fed)));
    const stats = cache.stats();
    const livePerHead = Array.from({ length: layers }, (_, l) =>
      Array.from(stats.livePerHead.subarray(l * kvHeads, (l + 1) * kvHeads)),
    );
    const bytesPerEntry = stats.liveTotal > 0 ? stats.bytesLive / stats.liveTotal : 0;
    const fullEntries = fed * layers * kvHeads;
    return {
      text,
      tokens: generated.length,
      finishReason: result.finishReasons[0]!,
      livePerHead,
      livePerLayer: Array.from(stats.livePerLayer),
      peakPerLayer: Array.from(stats.peakPerLayer),
      fed,
      peakTotal: stats.peakTotal,
      bytesLive: stats.bytesLive,
      bytesFull: bytesPerEntry * fullEntries,
      realisedBudget: stats.peakTotal / fullEntries,
      evictionRounds: stats.evictionRounds.reduce((a, b) => a + b, 0),
      reads: result.stats.reads[0]!,
      tokensPerSecond: result.stats.tokensPerSecond,
      firstTokenMs,
      verdict:
        task?.kind === 'generation' && run.example?.prompt === run.prompt
          ? task.verify(run.example, text)
          : undefined,
      backend: run.backend,
      cache:
        cache instanceof DeviceKVCache
          ? 'DeviceKVCache (WebGPU device pages)'
          : cache instanceof KVCache
            ? 'KVCache (host memory)'
            : 'another cache',
    };
  } finally {
    for (const cache of caches) releaseCache(cache);
    own?.model.dispose();
  }
}

/**
 * `prompt` as a user message in the model's chat template, the assistant's turn opened.
 *
 * @throws LetheError `E_ARG` naming `chat` when the model has no chat template.
 */
function chatPrompt(loaded: LoadedModel, prompt: string): string {
  if (loaded.chatTemplate === undefined) {
    throw new LetheError('E_ARG', 'this model has no chat template', 'chat');
  }
  return loaded.chatTemplate.render([{ role: 'user', content: prompt }], {
    addGenerationPrompt: true,
  });
}
