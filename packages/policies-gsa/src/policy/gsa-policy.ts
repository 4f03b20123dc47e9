import { LetheError } from '@lethe/core';
import {
  type AttentionGate,
  type LayerObservation,
  NO_NEEDS,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';

/** Options of {@link GsaPolicy}: a scorer policy's, and the gate whose stored values it ranks by. */
export interface GsaPolicyOptions extends ScorerPolicyOptions {
  /**
   * The gate network the model runs on every token it writes: the tfjs `GsaGate` (of
   * `@lethe/policies-gsa/train`, what `gsaProvider` loads) for Lethe's model, or a runtime's own
   * (e.g. over `gateValues`).
   */
  readonly gate: AttentionGate;
}

/**
 * GSA's budgeted cache (the paper's §3.4, Fig. 3): a round keeps, per KV head, the anchors — the
 * sinks and the recent window, which the cache protects — and fills the rest of the budget with
 * the entries of the highest stored gate `g` (ties to the older entry).
 *
 * The policy carries its gate network as `gate`: a runtime given it creates caches that store
 * gates (`storeGates`), runs the gate in every layer of prefill and decode, stores `g = exp(log g)`
 * with each entry, adds `log g` to the attention logits, and hands the stored gates to the policy
 * as `observation.gates`. No other observation field is read (`needs` is `NO_NEEDS`).
 */
export class GsaPolicy extends ScorerPolicy {
  readonly name: string = 'gsa';
  readonly needs = NO_NEEDS;
  /** The gate network the runtime runs. */
  readonly gate: AttentionGate;

  /** @throws LetheError as `ScorerPolicy`'s constructor (e.g. `E_BUDGET` for anchors above the keep count). */
  constructor(options: GsaPolicyOptions) {
    const { gate, ...scorer } = options;
    super(scorer);
    this.gate = gate;
  }

  /**
   * A copy of the stored gates, `[kvHeads, maxLive]`.
   *
   * @throws LetheError `E_STATE` naming `observation.gates` when the cache stores no gates: the
   *   runtime must create its caches with `storeGates: true` for a policy that carries a gate.
   */
  score(observation: LayerObservation): Float32Array {
    const { gates } = observation;
    if (gates === undefined) {
      throw new LetheError(
        'E_STATE',
        'the cache stores no gates; a runtime running a GSA policy must create its caches with storeGates: true and run the policy’s gate in every layer',
        'observation.gates',
      );
    }
    return gates.slice();
  }
}
