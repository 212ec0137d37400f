// Page helpers of the console's browser test: screenshots into docs/console/ and axe-core's
// accessibility check.
import { createRequire } from 'node:module';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as Axe from 'axe-core';
import type { Page } from 'playwright-core';
import { ROOT } from './lib.ts';

declare global {
  interface Window {
    /** axe-core, once injected into the page. */
    axe?: typeof Axe;
  }
}

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

export const SCREENSHOTS = join(ROOT, 'docs', 'console');

/**
 * Takes a full-page screenshot of `page` (always: it exercises the page) and writes it to
 * docs/console/<name>.png when UPDATE_SCREENSHOTS=1 or when that file is missing, so a run
 * does not churn the committed images. Answers whether it wrote the file.
 */
export async function screenshot(page: Page, name: string): Promise<boolean> {
  const png = await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide' });
  const file = join(SCREENSHOTS, `${name}.png`);
  const missing = await access(file).then(
    () => false,
    () => true,
  );
  if (process.env.UPDATE_SCREENSHOTS === '1' || missing) {
    await mkdir(SCREENSHOTS, { recursive: true });
    await writeFile(file, png);
    return true;
  }
  return false;
}

/** The impacts that fail the test. */
const FAILING = new Set<Axe.ImpactValue | null | undefined>(['serious', 'critical']);

/**
 * Runs axe-core on `page` (injected from node_modules) and answers its serious and critical
 * violations, each as one readable line per element: `where: rule (impact) help: target html`.
 */
export async function accessibilityViolations(page: Page, where: string): Promise<string[]> {
  const hasAxe = await page.evaluate(() => typeof window.axe !== 'undefined');
  if (!hasAxe) await page.addScriptTag({ path: AXE });
  const results = await page.evaluate(() =>
    window.axe!.run(document, { resultTypes: ['violations'] }),
  );
  const lines: string[] = [];
  for (const violation of results.violations) {
    if (!FAILING.has(violation.impact)) continue;
    for (const node of violation.nodes) {
      lines.push(
        `${where}: ${violation.id} (${violation.impact}) ${violation.help}: ` +
          `${node.target.join(' ')} ${node.html.replace(/\s+/g, ' ').slice(0, 200)}` +
          (node.failureSummary ? ` [${node.failureSummary.replace(/\s+/g, ' ').slice(0, 200)}]` : ''),
      );
    }
  }
  return lines;
}
