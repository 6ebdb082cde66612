/**
 * Debian's Chromium, driven by playwright-core (which ships no browser). A missing binary is a
 * failure with the fix in its message, never a skip: .ci/run installs the package.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}; the browser tests drive it. Install it with ` +
        '`apt-get update && apt-get install -y chromium` (as .ci/run does).',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    timeout: 30_000,
  });
}
