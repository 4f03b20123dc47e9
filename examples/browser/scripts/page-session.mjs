// What the page's scripts share (npm run bench, npm run screenshot): the built page (dist/)
// served by Vite's preview server on a free loopback port, and Debian's Chromium with WebGPU on
// SwiftShader (its software adapter), through playwright-core.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { preview } from 'vite';

const CHROMIUM = '/usr/bin/chromium';

/** Serves dist/ and starts Chromium; `close()` stops both. */
export async function openPageSession() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium`);
  if (!existsSync(join(import.meta.dirname, '..', 'dist', 'index.html'))) {
    throw new Error('dist/ not found: build the page first (npm run build)');
  }
  const server = await preview({
    root: join(import.meta.dirname, '..'),
    logLevel: 'silent',
    preview: { host: '127.0.0.1', port: 0, strictPort: false, open: false },
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--enable-unsafe-webgpu',
      '--use-webgpu-adapter=swiftshader',
    ],
  });
  return {
    url: `http://127.0.0.1:${server.httpServer.address().port}/`,
    browser,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}
