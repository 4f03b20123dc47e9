// Lays out what the page serves beside its code, in public/ (Vite copies it into dist/):
// the models and policy directories shipped.json names, from the repository's models/, and
// tfjs's wasm binaries, which its wasm backend fetches at run time. Run by `npm run build`.
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const models = join(root, '..', '..', 'models');
const shipped = JSON.parse(readFileSync(join(root, 'shipped.json'), 'utf8'));
const publicDir = join(root, 'public');

rmSync(publicDir, { recursive: true, force: true });
const dirs = new Set();
for (const model of shipped.models) {
  dirs.add(model.dir);
  for (const policy of Object.values(model.policies)) dirs.add(policy.dir);
}
for (const dir of dirs) {
  cpSync(join(models, dir), join(publicDir, 'models', dir), { recursive: true });
}

const require = createRequire(import.meta.url);
const wasmOut = join(
  dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')),
  'wasm-out',
);
mkdirSync(join(publicDir, 'wasm'), { recursive: true });
for (const name of [
  'tfjs-backend-wasm.wasm',
  'tfjs-backend-wasm-simd.wasm',
  'tfjs-backend-wasm-threaded-simd.wasm',
]) {
  cpSync(join(wasmOut, name), join(publicDir, 'wasm', name));
}
console.log(
  `copied ${dirs.size} model and policy directories and tfjs's wasm binaries into public/`,
);
