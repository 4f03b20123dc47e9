// tfjs-core registers no gradients by itself, and its `register_all_gradients` module uses
// extension-less ESM imports that plain Node cannot resolve. The build bundles that module into
// this package (see tsup.config.ts) so gradients work in plain Node, ESM and CJS, without a
// bundler. The bundled copies register into tfjs-core's global registry and engine.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
