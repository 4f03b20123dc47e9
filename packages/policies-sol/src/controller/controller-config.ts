import { LetheError } from '@lethe/core';

/**
 * The sizes of a SOL controller (§4; App. B's reference controller is width 512, 4 heads,
 * 1 layer, MLP ratio 4, action dim 32, dropout 0 — this package has one layer and no dropout).
 */
export interface SolControllerConfig {
  /** Length of the LM's hidden state and token embedding it reads (the LM's hidden size). */
  readonly inputSize: number;
  /** Model width `d` of the controller. */
  readonly width: number;
  /** Attention heads; `width` must be a multiple. */
  readonly heads: number;
  /** MLP hidden width over `width`; `mlpRatio · width` must be an integer. */
  readonly mlpRatio: number;
  /** Width of the learned previous-action embedding. */
  readonly actionDim: number;
  /** Size `A` of the discrete action set (`ActionSet.size`). */
  readonly actions: number;
  /** The most steps one episode may take (rows of the learned position table). */
  readonly maxHorizon: number;
}

/** What {@link controllerConfig} needs: the LM's size and the action count; the rest defaults. */
export type SolControllerOptions = Pick<SolControllerConfig, 'inputSize' | 'actions'> &
  Partial<Omit<SolControllerConfig, 'inputSize' | 'actions'>>;

/**
 * Defaults sized for the project's tiny task LMs (hidden size 64): width 64 instead of the
 * reference's 512; heads, MLP ratio and action dim as App. B; episodes of up to 64 steps (the
 * paper's horizon study uses T ∈ {4, 16, 64}).
 */
export const DEFAULT_CONTROLLER_OPTIONS = Object.freeze({
  width: 64,
  heads: 4,
  mlpRatio: 4,
  actionDim: 32,
  maxHorizon: 64,
});

const INTEGER_FIELDS = [
  'inputSize',
  'width',
  'heads',
  'actionDim',
  'actions',
  'maxHorizon',
] as const;

/**
 * Checks a controller's sizes: positive integers, `width` a multiple of `heads`, `mlpRatio` a
 * positive finite number giving an integer MLP width.
 *
 * @returns `config`, for chaining.
 * @throws LetheError `E_ARG` naming the field (`inputSize`, `width`, `heads`, `mlpRatio`,
 *   `actionDim`, `actions`, `maxHorizon`) that is wrong, or `config` when it is not an object.
 */
export function checkControllerConfig(config: SolControllerConfig): SolControllerConfig {
  if (typeof config !== 'object' || config === null) {
    throw new LetheError('E_ARG', 'must be an object of controller sizes', 'config');
  }
  for (const field of INTEGER_FIELDS) {
    const value = config[field];
    if (!(Number.isSafeInteger(value) && value >= 1)) {
      throw new LetheError('E_ARG', `must be a positive integer, got ${value}`, field);
    }
  }
  if (config.width % config.heads !== 0) {
    throw new LetheError(
      'E_ARG',
      `must divide width ${config.width}, got ${config.heads}`,
      'heads',
    );
  }
  const { mlpRatio } = config;
  if (!(Number.isFinite(mlpRatio) && mlpRatio > 0 && Number.isInteger(mlpRatio * config.width))) {
    throw new LetheError(
      'E_ARG',
      `must be a positive number with mlpRatio · width an integer, got ${mlpRatio}`,
      'mlpRatio',
    );
  }
  return config;
}

/**
 * A checked, frozen controller config: `options` over {@link DEFAULT_CONTROLLER_OPTIONS}.
 *
 * @throws LetheError as {@link checkControllerConfig}.
 */
export function controllerConfig(options: SolControllerOptions): SolControllerConfig {
  if (typeof options !== 'object' || options === null) {
    throw new LetheError('E_ARG', 'must be an object with inputSize and actions', 'options');
  }
  const { inputSize, actions } = options;
  const { width, heads, mlpRatio, actionDim, maxHorizon } = {
    ...DEFAULT_CONTROLLER_OPTIONS,
    ...definedOnly(options),
  };
  return Object.freeze(
    checkControllerConfig({ inputSize, width, heads, mlpRatio, actionDim, actions, maxHorizon }),
  );
}

/** The MLP's hidden width, `mlpRatio · width`. */
export function mlpWidth(config: SolControllerConfig): number {
  return Math.round(config.mlpRatio * config.width);
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
