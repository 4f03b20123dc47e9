import { LaneForm } from './page/lane-form';
import { formatBytes, LaneView } from './page/lane-view';
import type { ModelSource, Reply, Request } from './worker/protocol';
import { SHIPPED_MODELS } from './worker/shipped';

// The page: its controls, and the views of what the generation worker sends back.

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const backendSelect = $<HTMLSelectElement>('backend');
const backendStatus = $<HTMLOutputElement>('backend-status');
const modelSelect = $<HTMLSelectElement>('model');
const modelFolder = $<HTMLInputElement>('model-folder');
const modelStatus = $<HTMLElement>('model-status');
const modelError = $<HTMLElement>('model-error');
const promptInput = $<HTMLTextAreaElement>('prompt');
const exampleButton = $<HTMLButtonElement>('example');
const exampleStatus = $<HTMLOutputElement>('example-status');
const seedInput = $<HTMLInputElement>('seed');
const temperatureInput = $<HTMLInputElement>('temperature');
const maxTokensInput = $<HTMLInputElement>('max-tokens');
const chatRow = $<HTMLElement>('chat-row');
const chatBox = $<HTMLInputElement>('chat');
const compareBox = $<HTMLInputElement>('compare');
const generateButton = $<HTMLButtonElement>('generate');
const runStatus = $<HTMLOutputElement>('run-status');
const policyNames = $<HTMLDataListElement>('policy-names');

const worker = new Worker(new URL('./worker/generation-worker.ts', import.meta.url), {
  type: 'module',
});
const send = (request: Request) => worker.postMessage(request);

/** The shipped model selected (undefined for a picked folder). */
let shippedId: string | undefined = SHIPPED_MODELS[0]!.id;
/** The example the prompt was drawn from, while the prompt is unchanged. */
let example: { seed: number; index: number; prompt: string } | undefined;
let exampleIndex = 0;
let busy = true;
let running = 0;

const shippedOptions = (policy: string) =>
  SHIPPED_MODELS.find((m) => m.id === shippedId)?.policies[policy]?.options;
const forms = [new LaneForm(0, 'h2o', shippedOptions), new LaneForm(1, 'snapkv', shippedOptions)];
const views = [new LaneView(0), new LaneView(1)];
$('lane-forms').append(forms[0]!.root, forms[1]!.root);
$('lanes').append(views[0]!.root, views[1]!.root);

for (const model of SHIPPED_MODELS) modelSelect.append(new Option(model.label, model.id));
/** Shown while the model is a folder the visitor opened, so that any shipped one can be picked again. */
const openedFolder = new Option('(the folder you opened)', '');
openedFolder.disabled = true;
modelSelect.append(openedFolder);

function setBusy(value: boolean, status = ''): void {
  busy = value;
  generateButton.disabled = value;
  exampleButton.disabled = value;
  modelSelect.disabled = value;
  modelFolder.disabled = value;
  backendSelect.disabled = value;
  document.body.dataset.busy = String(value);
  runStatus.textContent = status;
}

function compareChanged(): void {
  forms[1]!.root.hidden = !compareBox.checked;
  views[1]!.root.hidden = !compareBox.checked;
}

function load(source: ModelSource): void {
  setBusy(true, 'loading the model…');
  modelError.hidden = true;
  modelStatus.textContent = 'loading…';
  send({ type: 'load', source });
}

worker.onmessage = (event: MessageEvent<Reply>) => {
  const reply = event.data;
  switch (reply.type) {
    case 'backend':
      backendSelect.value = reply.backend;
      backendStatus.textContent = `running on ${reply.backend}${reply.webgpu ? '' : ' (no WebGPU adapter in this browser)'}`;
      document.body.dataset.backend = reply.backend;
      break;
    case 'progress':
      modelStatus.textContent = `read ${formatBytes(reply.bytes)} (${reply.file.split('/').pop()})`;
      break;
    case 'loaded': {
      const m = reply.model;
      modelStatus.textContent = `${m.task === undefined ? 'model' : `${m.task} task model`}: ${m.layers} layers, ${m.queryHeads} query / ${m.kvHeads} KV heads, head dim ${m.headDim}, vocabulary ${m.vocabSize}; read ${formatBytes(m.bytes)} in ${m.loadMs.toFixed(0)} ms`;
      exampleButton.hidden = m.task === undefined;
      chatRow.hidden = !m.chatTemplate;
      chatBox.checked = false;
      exampleStatus.textContent = '';
      policyNames.replaceChildren(...reply.policies.map((name) => new Option(name)));
      setBusy(false);
      if (m.task !== undefined && promptInput.value === '') requestExample();
      break;
    }
    case 'example':
      promptInput.value = reply.prompt;
      example = { seed: 0, index: reply.index, prompt: reply.prompt };
      exampleStatus.textContent = reply.verifiable
        ? `held-out example ${reply.index} (seed 0): each lane shows the verifier's verdict`
        : `the first 128 characters of held-out document ${reply.index} (seed 0)`;
      break;
    case 'lane-start':
      views[reply.lane]!.start(reply.start);
      break;
    case 'token':
      views[reply.lane]!.text(reply.text);
      break;
    case 'step':
      views[reply.lane]!.step(reply.step);
      break;
    case 'lane-done':
      views[reply.lane]!.done(reply.result);
      laneFinished();
      break;
    case 'error':
      if (reply.lane !== undefined) {
        views[reply.lane]!.fail(reply.message);
        laneFinished();
      } else {
        modelError.textContent = reply.message;
        modelError.hidden = false;
        modelStatus.textContent = '';
        setBusy(false);
      }
      break;
  }
};

function laneFinished(): void {
  running--;
  if (running === 0) setBusy(false, 'done');
}

function requestExample(): void {
  send({ type: 'example', seed: 0, index: exampleIndex++ });
}

function generate(): void {
  if (busy) return;
  const active = compareBox.checked ? forms : forms.slice(0, 1);
  let lanes: ReturnType<LaneForm['read']>[];
  try {
    lanes = active.map((form) => form.read());
  } catch (error) {
    runStatus.textContent = (error as Error).message;
    return;
  }
  const maxTokens = maxTokensInput.value.trim();
  for (const view of views.slice(0, lanes.length)) view.reset();
  running = lanes.length;
  setBusy(true, 'generating…');
  send({
    type: 'generate',
    lanes,
    prompt: promptInput.value,
    chat: chatBox.checked && !chatRow.hidden,
    example:
      example !== undefined && example.prompt === promptInput.value
        ? { seed: example.seed, index: example.index }
        : undefined,
    seed: Number(seedInput.value),
    temperature: Number(temperatureInput.value),
    maxNewTokens: maxTokens === '' ? undefined : Number(maxTokens),
  });
}

backendSelect.addEventListener('change', () => {
  setBusy(true, `starting ${backendSelect.value}…`);
  send({
    type: 'backend',
    base: document.baseURI,
    backend: backendSelect.value as 'wasm' | 'webgpu',
  });
});
modelSelect.addEventListener('change', () => {
  shippedId = modelSelect.value;
  promptInput.value = '';
  exampleIndex = 0;
  load({ kind: 'shipped', id: modelSelect.value });
});
modelFolder.addEventListener('change', () => {
  const files = Array.from(modelFolder.files ?? []);
  modelFolder.value = ''; // the same folder, picked again, loads again
  if (files.length === 0) return;
  shippedId = undefined;
  modelSelect.value = '';
  promptInput.value = '';
  load({ kind: 'picked', files });
});
exampleButton.addEventListener('click', requestExample);
promptInput.addEventListener('input', () => {
  if (example !== undefined && promptInput.value !== example.prompt) {
    exampleStatus.textContent = 'your own prompt: no verdict';
  }
});
compareBox.addEventListener('change', compareChanged);
generateButton.addEventListener('click', generate);
compareChanged();
setBusy(true, 'starting…');

/** The backend to start with: `?backend=`, else WebGPU where a hardware adapter exists. */
async function initialBackend(): Promise<'wasm' | 'webgpu'> {
  const asked = new URLSearchParams(location.search).get('backend');
  if (asked === 'wasm' || asked === 'webgpu') return asked;
  const gpu = (
    navigator as {
      gpu?: { requestAdapter(): Promise<{ info?: { isFallbackAdapter?: boolean } } | null> };
    }
  ).gpu;
  const adapter = await gpu?.requestAdapter().catch(() => null);
  return adapter && adapter.info?.isFallbackAdapter !== true ? 'webgpu' : 'wasm';
}

void initialBackend().then((backend) => {
  send({ type: 'backend', base: document.baseURI, backend });
  load({ kind: 'shipped', id: shippedId! });
});
