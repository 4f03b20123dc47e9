/**
 * Numerical constants of the controller's architecture, shared by the typed-array forward
 * (`SolController`) and its tfjs twin (`ControllerGraph` of `./train`), so both compute one
 * function.
 */

/** ε of the parameter-free RMS normalisation of the LM's hidden state and token embedding. */
export const INPUT_RMS_EPS = 1e-6;

/** ε of the controller's LayerNorms (torch's default). */
export const LAYER_NORM_EPS = 1e-5;

/** `√(2/π)` of GELU's tanh approximation `½x(1 + tanh(√(2/π)(x + 0.044715x³)))`. */
export const GELU_SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** The cubic coefficient of GELU's tanh approximation. */
export const GELU_CUBIC = 0.044715;

/** The `previousAction` of an episode's first step: row 0 of the action-embedding table. */
export const NO_PREVIOUS_ACTION = -1;
