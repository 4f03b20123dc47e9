import { LetheError } from '@lethe/core';

/** `format` of a policy directory's manifest, `policy.json`. */
export const POLICY_FORMAT = 'lethe-policy';
/** Version of the manifest layout this package reads and writes. */
export const POLICY_FORMAT_VERSION = 1;
/** File name of the manifest inside a policy directory. */
export const POLICY_MANIFEST = 'policy.json';

/**
 * Read access to the files of a policy directory, so that loading parameters works wherever the
 * bytes come from: a Node directory (`@lethe/eval/node`'s `policyFilesFromDirectory`), `fetch`
 * in a browser, or memory.
 */
export interface PolicyFiles {
  /** Where the files come from (a path or URL), for messages. */
  readonly location: string;
  /** The UTF-8 text of file `name` (relative to the directory). */
  readText(name: string): Promise<string>;
  /** The bytes of file `name` (relative to the directory). */
  readBytes(name: string): Promise<Uint8Array>;
}

/** The manifest of a policy directory (`policy.json`). */
export interface PolicyManifest {
  /** Always {@link POLICY_FORMAT}. */
  readonly format: typeof POLICY_FORMAT;
  /** Always {@link POLICY_FORMAT_VERSION}. */
  readonly version: typeof POLICY_FORMAT_VERSION;
  /** Registry name of the provider that reads it. */
  readonly provider: string;
  /** Options the policy was trained with; a user's options override them key by key. */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * The model checkpoint the policy runs with, relative to the directory, when the policy is (part
   * of) a model's weights — NGC's policy is the RL-trained LM itself (`"."`). Absent for a policy
   * that acts on any frozen model of the right shape.
   */
  readonly model?: string;
  /** Provider-specific configuration (network sizes, the files holding tensors, …). */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /**
   * The content identity (`modelIdentity` of `@lethe/model`: `sha256:` and 64 hex digits) of the
   * model the policy runs on: the frozen model it was trained on (GSA, NAMM, SOL), or, for a
   * policy that is a model (NGC, {@link PolicyManifest.model} set), that model itself. A runtime
   * refuses the policy on a model with another identity ({@link checkBaseModel}), even one of the
   * same shape. Absent in a directory written without it: nothing to check.
   */
  readonly baseModel?: string;
}

/** A policy directory: its files and its checked manifest. */
export interface PolicyDirectory {
  readonly files: PolicyFiles;
  readonly manifest: PolicyManifest;
}

const FIELDS = ['format', 'version', 'provider', 'options', 'model', 'parameters', 'baseModel'];

/** A model identity: `sha256:` and 64 lower-case hex digits. */
const IDENTITY = /^sha256:[0-9a-f]{64}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a parsed `policy.json`.
 *
 * @throws LetheError `E_FORMAT` naming `argument` for another format or version, an unknown
 *   field, or a missing or mistyped one.
 */
export function checkPolicyManifest(json: unknown, argument = POLICY_MANIFEST): PolicyManifest {
  const fail = (message: string): never => {
    throw new LetheError('E_FORMAT', message, argument);
  };
  if (!isRecord(json)) return fail('must be a JSON object');
  if (json.format !== POLICY_FORMAT || json.version !== POLICY_FORMAT_VERSION) {
    fail(
      `is not a ${POLICY_FORMAT} v${POLICY_FORMAT_VERSION} manifest (format ${JSON.stringify(json.format)}, version ${JSON.stringify(json.version)})`,
    );
  }
  for (const key of Object.keys(json)) {
    if (!FIELDS.includes(key)) fail(`unknown field "${key}"; valid fields: ${FIELDS.join(', ')}`);
  }
  if (typeof json.provider !== 'string' || json.provider.length === 0) {
    fail('field "provider" must be a non-empty string');
  }
  if (!isRecord(json.options)) fail('field "options" must be an object');
  if (json.model !== undefined && (typeof json.model !== 'string' || json.model.length === 0)) {
    fail('field "model" must be a non-empty relative path');
  }
  if (json.parameters !== undefined && !isRecord(json.parameters)) {
    fail('field "parameters" must be an object');
  }
  if (
    json.baseModel !== undefined &&
    !(typeof json.baseModel === 'string' && IDENTITY.test(json.baseModel))
  ) {
    fail(
      `field "baseModel" must be a model identity ("sha256:" and 64 hex digits), got ${JSON.stringify(json.baseModel)}`,
    );
  }
  return json as unknown as PolicyManifest;
}

/**
 * Reads and checks the manifest of a policy directory.
 *
 * @throws LetheError `E_FORMAT` naming the manifest's location for unparsable JSON or a bad
 *   manifest (see {@link checkPolicyManifest}); the file reader's own error when it is missing.
 */
export async function openPolicyDirectory(files: PolicyFiles): Promise<PolicyDirectory> {
  const argument = `${files.location}/${POLICY_MANIFEST}`;
  const text = await files.readText(POLICY_MANIFEST);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, argument);
  }
  return { files, manifest: checkPolicyManifest(json, argument) };
}

/** `manifest` as the text of a `policy.json` (checked first; two-space indent, final newline). */
export function formatPolicyManifest(manifest: PolicyManifest): string {
  checkPolicyManifest(manifest, 'manifest');
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/**
 * Checks that the policy of `directory` may run on the model of identity `identity`
 * (`modelIdentity` of `@lethe/model`): its manifest names no base model, or that one.
 *
 * @throws LetheError `E_CHECKPOINT` naming the directory's manifest when the manifest names
 *   another base model — a policy (gates, a controller, a scorer's normalisation, an RL-trained
 *   LM) fits the model it was trained on, not another of the same shape.
 */
export function checkBaseModel(
  directory: PolicyDirectory,
  identity: string,
  model = 'this model',
): void {
  const { baseModel, provider } = directory.manifest;
  if (baseModel === undefined || baseModel === identity) return;
  throw new LetheError(
    'E_CHECKPOINT',
    `is a ${provider} policy trained on the model ${short(baseModel)}; ${model} is ${short(identity)} (a policy runs on the model it was trained on)`,
    `${directory.files.location}/${POLICY_MANIFEST}`,
  );
}

/** An identity shortened for messages: `sha256:` and its first 12 hex digits. */
function short(identity: string): string {
  return identity.slice(0, 19);
}
