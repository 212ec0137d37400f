// Shared by the console's browser test and its bench: the local API (target/debug/local-api,
// on its own stack and port, against moto on MOTO_ENDPOINT), Debian's headless chromium
// (playwright-core, never a downloaded browser), and a poll-until helper.
//
// TypeScript, checked by `tsc -p e2e` (part of `npm run build`) and run by tsx (pinned in
// package.json). tsx keeps function names (esbuild's keepNames): a function Playwright sends to
// the page as source text (evaluate, addInitScript) must name no function inside it (`const f =
// () => ...` becomes `__name(...)`, unknown in the page); pass anonymous functions instead.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import type { ApiClient } from '../src/api/client.ts';
import { apiClient, busEvents, localClient, placedCalls, type BusEvent, type PlacedCall } from './clients.ts';

/** The repository (console/e2e/../..); OUTBOUND_ROOT overrides it. */
export const ROOT = process.env.OUTBOUND_ROOT
  ? resolve(process.env.OUTBOUND_ROOT)
  : resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => ok(port));
    });
  });
}

/** A local API started by `startLocalApi`. */
export interface LocalApi {
  /** `http://127.0.0.1:<port>` */
  base: string;
  port: number;
  /** The LOCAL_STACK it runs on. */
  stack: string;
  /** The sign-in URL it printed, with its development token. */
  signInUrl: string;
  token: string;
  /** The API as the console calls it, with `token` as its Bearer token (clients.ts). */
  api: (token: string) => ApiClient;
  /** `GET /local/calls`: the calls its simulated provider placed, oldest first. */
  calls: () => Promise<PlacedCall[]>;
  /** `GET /local/events`: the events its bus delivered, oldest first. */
  events: () => Promise<BusEvent[]>;
  /** Ends it (safe to call twice). */
  stop: () => Promise<void>;
  exited: () => boolean;
  /** The tail of what it printed. */
  output: () => string;
}

/** An error that `until` does not retry. */
export interface FatalError extends Error {
  fatal?: boolean;
}

/**
 * Starts target/debug/local-api on a fresh stack (LOCAL_STACK=<prefix>-<random>) and a free
 * port, waits for its sign-in URL and its first answer, and answers { base, signInUrl, token,
 * api, calls, events, stop, exited, output }. `stop()` ends it (safe to call twice); it is
 * killed too when this process exits or is interrupted. `output()` is the tail of what it printed.
 */
export async function startLocalApi({ prefix = 'e2e', dialTickMs = 500 } = {}): Promise<LocalApi> {
  const port = await freePort();
  const stack = `${prefix}-${randomBytes(4).toString('hex')}`;
  const binary = process.env.LOCAL_API ?? join(ROOT, 'target', 'debug', 'local-api');
  const child: ChildProcess = spawn(binary, [], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOCAL_STACK: stack,
      PORT: String(port),
      DIAL_TICK_MS: String(dialTickMs),
      MOTO_ENDPOINT: process.env.MOTO_ENDPOINT ?? 'http://127.0.0.1:5000',
      RUST_LOG: process.env.RUST_LOG ?? 'warn',
      RUST_BACKTRACE: process.env.RUST_BACKTRACE ?? '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: string) => {
    output += chunk;
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  const stdoutStream = child.stdout!;
  child.stderr!.setEncoding('utf8').on('data', keep);
  stdoutStream.setEncoding('utf8');
  // Never leave it behind: killed when this process exits, or is interrupted or terminated.
  const killOnExit = () => child.kill('SIGKILL');
  const killOnSignal = (signal: NodeJS.Signals) => {
    child.kill('SIGKILL');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killOnExit);
  process.once('SIGINT', killOnSignal);
  process.once('SIGTERM', killOnSignal);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', killOnExit);
    process.off('SIGINT', killOnSignal);
    process.off('SIGTERM', killOnSignal);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
  };
  const started = await new Promise<{ signInUrl: string; token: string }>((ok, fail) => {
    let stdout = '';
    const timer = setTimeout(
      () => fail(new Error(`local-api printed no sign-in URL within 60 s:\n${stdout}\n${output.slice(-4000)}`)),
      60_000,
    );
    stdoutStream.on('data', (chunk: string) => {
      keep(chunk);
      stdout += chunk;
      const url = stdout.match(/^\s*(http:\/\/127\.0\.0\.1:\d+\/#\/signin\?token=(\S+))\s*$/m);
      if (url) {
        clearTimeout(timer);
        ok({ signInUrl: url[1], token: url[2] });
      }
    });
    child.once('error', (error: Error) => {
      clearTimeout(timer);
      fail(new Error(`cannot start ${binary}: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`local-api exited (${code ?? signal}) before it printed its sign-in URL:\n${output.slice(-4000)}`));
    });
  }).catch(async (error) => {
    await stop();
    throw error;
  });
  const base = `http://127.0.0.1:${port}`;
  const local = localClient(base);
  // Wait until it serves (a server that fails as it starts to serve fails here, with its output).
  try {
    await until(
      'local-api answers',
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw Object.assign<Error, Pick<FatalError, 'fatal'>>(new Error(`local-api exited (${child.exitCode ?? child.signalCode}):\n${output.slice(-4000)}`), { fatal: true });
        }
        const { response } = await local.GET('/local/events', { parseAs: 'stream' });
        return response.ok;
      },
      { timeout: 20_000, interval: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ...started,
    base,
    port,
    stack,
    api: (token) => apiClient(base, token),
    calls: () => placedCalls(local),
    events: () => busEvents(local),
    stop,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    output: () => output,
  };
}

/**
 * A development access token for `tenant` with `scopes` (D25), signed as the local API's are:
 * target/debug/dev-token (DEV_TOKEN overrides it; `make token` runs the same binary), in this
 * process's environment, as `startLocalApi` runs the API. With `member`, a plain member's
 * (`dev-token --member`: in no group, so neither an administrator nor an operator).
 */
export function devToken(tenant: string, scopes: string[] = [], { member = false } = {}): Promise<string> {
  const binary = process.env.DEV_TOKEN ?? join(ROOT, 'target', 'debug', 'dev-token');
  const args = member ? ['--member', tenant, ...scopes] : [tenant, ...scopes];
  return new Promise((ok, fail) => {
    execFile(binary, args, { cwd: ROOT }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${binary} failed: ${error.message}\n${stderr}`));
      else ok(stdout.trim());
    });
  });
}

/**
 * A persistent context on a fresh --user-data-dir (a cold profile: no cache, no storage);
 * answers { context, close } and removes the profile on close.
 */
export async function freshContext(
  options: Parameters<typeof chromium.launchPersistentContext>[1] = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'outbound-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    timeout: 60_000,
    ...options,
  });
  const close = async () => {
    await context.close().catch(() => {});
    await rm(userDataDir, { recursive: true, force: true });
  };
  return { context, close };
}

/**
 * Calls `check` until it neither throws nor answers false, every `interval` ms, for at most
 * `timeout` ms; then throws the last error (with `what`). Answers check's last value.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | false> | T | false,
  { timeout = 60_000, interval = 250 } = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  let last: FatalError;
  for (;;) {
    try {
      const value = await check();
      if (value !== false) return value as T;
      last = new Error(`${what}: not yet`);
    } catch (error) {
      if ((error as FatalError | undefined)?.fatal) throw error;
      last = error instanceof Error ? error : new Error(String(error));
    }
    if (Date.now() > deadline) {
      last.message = `timed out after ${timeout} ms waiting until ${what}: ${last.message}`;
      throw last;
    }
    await new Promise((ok) => setTimeout(ok, interval));
  }
}
