// The console's performance figures (`scripts/console.sh bench`):
//   console.js_bytes, console.js_gzip_bytes, console.css_bytes, console.css_gzip_bytes: the built
//     files (console/dist/assets/*.js, *.css), raw and gzipped at level 9, summed;
//   console.first_load_ms.{dom_content_loaded,load,data_sources_shown}: BENCH_LOADS (default 5)
//     cold loads of the sign-in URL against target/debug/local-api, each in a fresh profile,
//     from the navigation's start (the page's performance timing), one sample each.
// Each figure is appended to $BENCH_DIR/samples.jsonl as {"key":...,"value":...} and printed as
// `key value`.
import { appendFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync, constants } from 'node:zlib';
import { ROOT, freshContext, startLocalApi } from './lib.ts';

declare global {
  interface Window {
    /** performance.now() when a "Data sources" heading first showed (set by watchForDataSources). */
    __dataSourcesShown?: number;
  }
}

const BENCH_DIR = process.env.BENCH_DIR ?? join(ROOT, '.local', 'bench');
const LOADS = Number(process.env.BENCH_LOADS ?? 5);
const DIST = join(ROOT, 'console', 'dist');

async function record(key: string, value: number): Promise<void> {
  await appendFile(join(BENCH_DIR, 'samples.jsonl'), `${JSON.stringify({ key, value })}\n`);
  console.log(`${key} ${value}`);
}

async function sizes() {
  const assets = join(DIST, 'assets');
  const names = await readdir(assets);
  for (const ext of ['js', 'css']) {
    let raw = 0;
    let gzip = 0;
    for (const name of names.filter((n) => n.endsWith(`.${ext}`))) {
      const bytes = await readFile(join(assets, name));
      raw += bytes.length;
      gzip += gzipSync(bytes, { level: constants.Z_BEST_COMPRESSION }).length;
    }
    await record(`console.${ext}_bytes`, raw);
    await record(`console.${ext}_gzip_bytes`, gzip);
  }
}

// Runs in the page before its scripts: notes when a heading "Data sources" first shows.
// Playwright sends its source text to the page: it names no inner function (see lib.ts).
function watchForDataSources() {
  const observer = new MutationObserver(() => {
    if (window.__dataSourcesShown !== undefined) return;
    for (const heading of document.querySelectorAll('h1, h2, [role="heading"]')) {
      if (heading.textContent?.trim() === 'Data sources' && heading.getClientRects().length > 0) {
        window.__dataSourcesShown = performance.now();
        observer.disconnect();
        return;
      }
    }
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true });
}

async function firstLoads() {
  const api = await startLocalApi({ prefix: 'bench' });
  try {
    for (let run = 0; run < LOADS; run++) {
      const { context, close } = await freshContext();
      try {
        await context.addInitScript(watchForDataSources);
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(api.signInUrl, { waitUntil: 'load' });
        await page.waitForFunction(() => window.__dataSourcesShown !== undefined, null, {
          timeout: 30_000,
        });
        const timing = await page.evaluate(() => {
          const [nav] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
          return {
            domContentLoaded: nav.domContentLoadedEventEnd - nav.startTime,
            load: nav.loadEventEnd - nav.startTime,
            shown: window.__dataSourcesShown! - nav.startTime,
          };
        });
        const ms = (value: number) => Math.round(value * 10) / 10;
        await record('console.first_load_ms.dom_content_loaded', ms(timing.domContentLoaded));
        await record('console.first_load_ms.load', ms(timing.load));
        await record('console.first_load_ms.data_sources_shown', ms(timing.shown));
      } finally {
        await close();
      }
    }
  } finally {
    await api.stop();
  }
}

await mkdir(BENCH_DIR, { recursive: true });
await sizes();
await firstLoads();
