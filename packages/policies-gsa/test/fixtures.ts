import { Rng } from '@lethe/core';
import type { PolicyDirectory, PolicyManifest } from '@lethe/kv-cache';
import type { GsaGateParameters } from '../src/gate/gate-parameters';
import type { GateGranularity } from '../src/gate/granularity';
import { initGateParameters } from '../src/gate/init-gate-parameters';

/** The task models' shape, shrunk: 2 layers, hidden 8, 2 KV heads. */
export const SHAPE = { layers: 2, hiddenSize: 8, kvHeads: 2 } as const;

/** A gate of {@link SHAPE} with random biases too (so every tensor matters). */
export function randomGate(granularity: GateGranularity, seed = 1): GsaGateParameters {
  const parameters = initGateParameters(SHAPE, granularity, { seed, scale: 0.6 });
  const rng = new Rng(seed + 1000);
  for (const module of parameters.modules) {
    module.b1.set(rng.normal(module.b1.length));
    module.b2.set(rng.normal(module.b2.length));
  }
  return parameters;
}

/** `n` standard normals from `seed`. */
export function normals(n: number, seed: number): Float32Array {
  return new Rng(seed).normal(n);
}

/** A policy directory held in memory: `policy.json`'s `parameters` and the named files. */
export function memoryDirectory(
  parameters: object | undefined,
  files: Record<string, Uint8Array>,
): PolicyDirectory {
  return {
    files: {
      location: 'memory:gsa',
      readText: async () => '',
      readBytes: async (name) => {
        const bytes = files[name];
        if (bytes === undefined) throw new Error(`memory:gsa has no file ${name}`);
        return bytes;
      },
    },
    manifest: {
      format: 'lethe-policy',
      version: 1,
      provider: 'gsa',
      options: {},
      ...(parameters === undefined ? {} : { parameters }),
    } as PolicyManifest,
  };
}
