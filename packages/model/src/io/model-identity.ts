import { checkBaseModel, type PolicyDirectory } from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/decoder-model';

/**
 * Configuration fields that say how a checkpoint was stored or produced, not what the model
 * computes: left out of {@link modelIdentity}, so a model saved as float32 and reloaded (which
 * adds `torch_dtype`) keeps its identity.
 */
const STORAGE_FIELDS = new Set(['torch_dtype', 'dtype', 'transformers_version', '_name_or_path']);

/**
 * The content identity of a model: `sha256:<hex>` of its configuration (keys sorted, storage
 * fields such as `torch_dtype` left out) and of every
 * parameter — name, shape and the SHA-256 of its float32 bytes — in name order. Two models have
 * the same identity when and only when (up to SHA-256) they compute the same function with the
 * same configuration, however their checkpoints were sharded or stored (float32, bf16 widened, …)
 * and whatever their directory is called. A policy directory records its base model's identity so
 * that it is refused on another model of the same shape. Reads every parameter back from the
 * backend once; uses Web Crypto (`crypto.subtle`: Node ≥ 20 and browsers in secure contexts).
 *
 * @example
 * ```ts
 * const identity = await modelIdentity(model); // 'sha256:3f1c…'
 * ```
 */
export async function modelIdentity(model: DecoderModel): Promise<string> {
  const names = [...model.parameters.keys()].sort();
  const config = Object.fromEntries(
    Object.entries(model.config).filter(([key]) => !STORAGE_FIELDS.has(key)),
  );
  const parts: string[] = [canonicalJson(config)];
  for (const name of names) {
    const variable = model.parameters.get(name)!;
    const data = (await variable.data()) as Float32Array;
    const bytes = new Uint8Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
    parts.push(`${name}:${variable.shape.join('x')}:${await sha256Hex(bytes)}`);
  }
  const digest = await sha256Hex(new TextEncoder().encode(parts.join('\n')));
  return `sha256:${digest}`;
}

/** `value` as JSON with every object's keys sorted (arrays keep their order). */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === 'object' && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Checks that the policy of `directory` may run on `model`: its manifest names no base model, or
 * the `modelIdentity` of this one (computed only when it names one).
 *
 * @param label what `model` is, for the message (e.g. its directory).
 * @throws LetheError `E_CHECKPOINT` naming the directory's `policy.json` when the policy was
 *   trained on another model (see `checkBaseModel` of `@lethe/kv-cache`).
 */
export async function checkPolicyBaseModel(
  directory: PolicyDirectory,
  model: DecoderModel,
  label?: string,
): Promise<void> {
  if (directory.manifest.baseModel === undefined) return;
  checkBaseModel(directory, await modelIdentity(model), label);
}
