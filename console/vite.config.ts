import { defineConfig } from 'vitest/config';

// Dev only: the API runs beside the dev server, which also serves its config.json (local mode:
// a build carries none). In production the console is served from the same origin as the API
// (or reads apiBase from config.json).
const apiTarget = process.env.API_TARGET ?? 'http://127.0.0.1:3123';

export default defineConfig({
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  server: { proxy: { '/api': apiTarget, '/config.json': apiTarget } },
  build: { target: 'es2022', sourcemap: false },
  // Unit tests run in node; a test file of components says `// @vitest-environment happy-dom`.
  test: { environment: 'node', include: ['tests/**/*.test.{ts,tsx}'] },
});
