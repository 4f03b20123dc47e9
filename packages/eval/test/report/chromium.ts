import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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

/** Whether {@link CHROMIUM} is installed. */
export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

/** Starts headless {@link CHROMIUM} through playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
}
