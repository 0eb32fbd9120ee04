// A real browser for the report tests: Debian's chromium driven by
// playwright-core, headless, with a fresh profile in a temp dir and nothing in
// the background that talks to the network. Every request the page makes is
// routed through the test and recorded, and any that is not file:// is refused;
// console errors and page errors are collected.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { available, program } from './system-tools.js';

export const CHROMIUM = '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return available(program('chromium', CHROMIUM, 'apt-get install chromium'));
}

export interface OpenedPage {
  page: Page;
  /** Every URL the page asked for, in order. */
  requests: string[];
  /** Console messages of type error, and uncaught page errors. */
  errors: string[];
  close(): Promise<void>;
}

export async function openFile(file: string, viewport = { width: 1280, height: 900 }): Promise<OpenedPage> {
  const profile = mkdtempSync(join(tmpdir(), 'aerial-chromium-'));
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'],
      viewport,
    });
    const requests: string[] = [];
    const errors: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      requests.push(url);
      return url.startsWith('file://') ? route.continue() : route.abort('blockedbyclient');
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (request) => {
      if (!requests.includes(request.url())) requests.push(request.url());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const opened = context;
    return {
      page,
      requests,
      errors,
      close: async () => {
        await opened.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
