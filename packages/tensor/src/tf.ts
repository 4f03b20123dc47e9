import * as tf from '@tensorflow/tfjs-core';

/**
 * The `@tensorflow/tfjs-core` namespace every Lethe package uses, re-exported so that all
 * packages share one tfjs instance (and one registry of kernels and gradients).
 */
export { tf };
