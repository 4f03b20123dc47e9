import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium, which CI installs (`.ci/run`). */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, sandbox-free and offline: nothing but the page itself is loaded. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether a browser test must be skipped: {@link CHROMIUM} is missing and this is not CI (with
 * `CI=true` the test runs, and fails when Chromium is missing). When skipping, says so on the
 * console, naming the test.
 *
 * @param what the test, e.g. `[@lethe/eval] report rendering test`.
 */
export function skipWithoutChromium(what: string): boolean {
  const skip = !existsSync(CHROMIUM) && !process.env.CI;
  if (skip) {
    console.warn(
      `${what} skipped: ${CHROMIUM} not found. Install Debian's chromium package to run it; ` +
        'with CI=true it fails instead of skipping.',
    );
  }
  return skip;
}

/**
 * Starts headless {@link CHROMIUM} through playwright-core.
 *
 * @throws Error naming the missing executable when Chromium is not installed.
 */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
}

/**
 * Starts headless {@link CHROMIUM} with WebGPU on SwiftShader, its software adapter (Chromium
 * ships it; no GPU needed). WebGPU exists only in secure contexts: open pages with
 * {@link openSecurePage}.
 *
 * @throws Error naming the missing executable when Chromium is not installed.
 */
export function launchChromiumWithWebGpu(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);
  const args = ARGS.filter((arg) => arg !== '--disable-gpu');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [...args, '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'],
    timeout: 30_000,
  });
}

/** An origin the tests serve themselves (intercepted: nothing goes to the network). */
const SECURE_ORIGIN = 'https://lethe.test/';

/**
 * A new page of `browser` on an https origin served by the test itself (a secure context, as
 * WebGPU requires), empty but for a title; nothing is fetched from the network.
 */
export async function openSecurePage(browser: Browser): Promise<Page> {
  const page = await browser.newPage();
  await page.route(`${SECURE_ORIGIN}**`, (route) =>
    route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>lethe</title>' }),
  );
  await page.goto(SECURE_ORIGIN);
  return page;
}
