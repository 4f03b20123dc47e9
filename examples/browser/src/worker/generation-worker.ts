import { LetheError } from '@lethe/core';
import {
  type ModelFiles,
  modelFilesFromFileList,
  modelFilesFromUrl,
  readModelFiles,
} from '@lethe/model';
import { createDefaultRegistry, filesPolicyStore } from '@lethe/policies';
import { ensureWebGpu, initBackend, tf } from '@lethe/tensor';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { countedFiles } from './counted-files';
import { laneSpec, prepareLanePolicy, shippedPolicyDir } from './lane-policy';
import { type LoadedModel, loadModelFiles } from './loaded-model';
import type { LaneRequest, ModelSource, Reply, Request } from './protocol';
import { runLane } from './run-lane';
import { SHIPPED_MODELS, type ShippedModel, shippedUrl } from './shipped';

// The page's generation worker: it owns tfjs, the model and the policies, and answers the
// page's requests one at a time (protocol.ts), streaming tokens and memory snapshots as they
// come, so the page stays responsive while a model runs.

const registry = createDefaultRegistry();
/** Policy directories a visitor picked, by the key a lane names them with (`picked-policy-<lane>`). */
const pickedPolicies = new Map<string, readonly File[]>();
const store = filesPolicyStore((dir) => {
  const picked = pickedPolicies.get(dir);
  return picked === undefined ? modelFilesFromUrl(dir) : modelFilesFromFileList(picked);
}, readModelFiles);

let base = '';
let backend = '';
let loaded:
  | { readonly model: LoadedModel; readonly shipped?: ShippedModel; readonly source: ModelSource }
  | undefined;
let queue = Promise.resolve();

/** The part of a dedicated worker's global scope this worker uses. */
interface WorkerScope {
  postMessage(message: Reply): void;
  onmessage: ((event: MessageEvent<Request>) => void) | null;
}
const scope = globalThis as unknown as WorkerScope;
const post = (reply: Reply) => scope.postMessage(reply);

scope.onmessage = (event) => {
  const request = event.data;
  queue = queue.then(() => handle(request)).catch((error) => post(errorReply(error)));
};

async function handle(request: Request): Promise<void> {
  switch (request.type) {
    case 'backend':
      return switchBackend(request.base, request.backend);
    case 'load':
      return load(request.source);
    case 'example':
      return example(request.seed, request.index);
    case 'generate':
      return generateLanes(request);
  }
}

/** Starts `name` (wasm binaries from `wasm/` beside the page); a loaded model is read again. */
async function switchBackend(pageBase: string, name: 'wasm' | 'webgpu'): Promise<void> {
  if (base === '') setWasmPaths(new URL('wasm/', pageBase).href);
  base = pageBase;
  backend = await initBackend(name);
  const webgpu = await ensureWebGpu({ required: false });
  post({ type: 'backend', backend, webgpu });
  if (loaded !== undefined) await load(loaded.source);
}

async function load(source: ModelSource): Promise<void> {
  loaded?.model.model.dispose();
  loaded = undefined;
  const shipped =
    source.kind === 'shipped' ? SHIPPED_MODELS.find((m) => m.id === source.id) : undefined;
  if (source.kind === 'shipped' && shipped === undefined) {
    throw new LetheError('E_ARG', `no shipped model "${source.id}"`, 'model');
  }
  const files: ModelFiles =
    shipped !== undefined
      ? modelFilesFromUrl(shippedUrl(shipped.dir, base))
      : modelFilesFromFileList((source as { files: readonly File[] }).files);
  const counted = countedFiles(files, (file, bytes) => post({ type: 'progress', file, bytes }));
  const started = performance.now();
  const model = await loadModelFiles(counted);
  loaded = { model, source, ...(shipped === undefined ? {} : { shipped }) };
  const c = model.model.config;
  post({
    type: 'loaded',
    model: {
      location: model.location,
      layers: c.num_hidden_layers,
      kvHeads: c.num_key_value_heads,
      queryHeads: c.num_attention_heads,
      headDim: c.head_dim,
      vocabSize: c.vocab_size,
      task: model.task?.name,
      chatTemplate: model.chatTemplate !== undefined,
      bytes: counted.bytes(),
      loadMs: performance.now() - started,
    },
    policies: registry
      .names()
      .filter((name) => registry.provider(name).learned === undefined || shipped?.policies[name]),
  });
}

/** A prompt from the loaded task model's example generator. */
function example(seed: number, index: number): void {
  const task = requireLoaded().model.task;
  if (task === undefined) throw new LetheError('E_ARG', 'is not a task model', 'model');
  const prompt =
    task.kind === 'generation'
      ? task.example(seed, index).prompt
      : task.document(seed, index).slice(0, 128);
  post({ type: 'example', index, prompt, verifiable: task.kind === 'generation' });
}

async function generateLanes(request: Extract<Request, { type: 'generate' }>): Promise<void> {
  const current = requireLoaded();
  const task = current.model.task;
  const example =
    request.example !== undefined && task?.kind === 'generation'
      ? task.example(request.example.seed, request.example.index)
      : undefined;
  for (const [lane, laneRequest] of request.lanes.entries()) {
    try {
      const spec = laneSpec(laneRequest, registry, policyDirs(lane, laneRequest, current.shipped));
      const policy = await prepareLanePolicy(spec, registry, store);
      try {
        const result = await runLane({
          loaded: current.model,
          policy,
          store,
          budget: laneRequest.budget,
          prompt: request.prompt,
          chat: request.chat,
          example,
          seed: request.seed,
          temperature: request.temperature,
          maxNewTokens: request.maxNewTokens,
          backend,
          onStart: (start) => post({ type: 'lane-start', lane, start }),
          onText: (text) => post({ type: 'token', lane, text }),
          onStep: (step) => post({ type: 'step', lane, step }),
        });
        post({ type: 'lane-done', lane, result: { ...result, tensors: tf.memory().numTensors } });
      } finally {
        policy.policy.release();
      }
    } catch (error) {
      post(errorReply(error, lane));
    }
  }
}

/**
 * Where a lane's learned parts read their policy directories: the folder the visitor picked for
 * the lane (one learned part only), else the ones shipped for the model.
 */
function policyDirs(
  lane: number,
  request: LaneRequest,
  shipped: ShippedModel | undefined,
): (name: string) => string | undefined {
  if (request.policyFolder === undefined) return (name) => shippedPolicyDir(shipped, name, base);
  const key = `picked-policy-${lane}`;
  pickedPolicies.set(key, request.policyFolder);
  let served: string | undefined;
  return (name) => {
    if (served !== undefined && served !== name) {
      throw new LetheError(
        'E_ARG',
        `serves one learned part, not ${served} and ${name}`,
        'policy folder',
      );
    }
    served = name;
    return key;
  };
}

function requireLoaded(): NonNullable<typeof loaded> {
  if (loaded === undefined) throw new LetheError('E_ARG', 'no model is loaded', 'model');
  return loaded;
}

function errorReply(error: unknown, lane?: number): Reply {
  const code = error instanceof LetheError ? error.code : undefined;
  return {
    type: 'error',
    ...(lane === undefined ? {} : { lane }),
    message: error instanceof Error ? error.message : String(error),
    ...(code === undefined ? {} : { code }),
  };
}
