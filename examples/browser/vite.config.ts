import { defineConfig } from 'vite';

// A static site: relative asset URLs (it can be served from any folder), the generation worker
// as an ES module, and public/ (the shipped models and tfjs's wasm binaries, laid out by
// scripts/copy-assets.mjs) copied beside the code. `mpa`: a missing file is a 404 (the model
// reader takes a 404 for an absent optional file), not the SPA fallback's index.html.
export default defineConfig({
  base: './',
  appType: 'mpa',
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    target: 'es2022',
    chunkSizeWarningLimit: 4096,
    // Rolldown's notes on slow plugin callbacks carry colour codes whatever NO_COLOR says (CI's
    // log must have none) and concern Vite's own plugins, not this page
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  preview: { port: 4173, host: '127.0.0.1' },
});
