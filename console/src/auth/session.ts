// The signed-in token (sessionStorage) and the two ways to get one: a development token
// (local mode) or the Cognito hosted UI with authorization code + PKCE.
import type { AppConfig } from '../config';
import { challengeS256, createVerifier, randomState } from './pkce';

const TOKEN_KEY = 'outbound.token';
const PKCE_KEY = 'outbound.pkce';

type Listener = () => void;
const listeners = new Set<Listener>();
let notice: string | null = null;

export function getToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  listeners.forEach((l) => l());
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** A message for the sign-in page (e.g. why the person was signed out). */
export function takeNotice(): string | null {
  const n = notice;
  notice = null;
  return n;
}

export function expireSession(message: string): void {
  notice = message;
  setToken(null);
}

export function redirectUri(): string {
  return `${window.location.origin}/`;
}

export async function startCognitoSignIn(config: AppConfig): Promise<void> {
  if (config.auth.mode !== 'cognito') return;
  const verifier = createVerifier();
  const state = randomState();
  const returnHash = window.location.hash && !window.location.hash.startsWith('#/signin') ? window.location.hash : '';
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state, returnHash }));
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: config.auth.clientId,
    redirect_uri: redirectUri(),
    scope: config.auth.scopes.join(' '),
    state,
    code_challenge: await challengeS256(verifier),
    code_challenge_method: 'S256',
  });
  window.location.assign(`${config.auth.domain}/oauth2/authorize?${params}`);
}

/** On return from the hosted UI (`?code=&state=`): exchange the code. Returns an error or null. */
export async function completeCognitoSignIn(config: AppConfig): Promise<string | null> {
  if (config.auth.mode !== 'cognito') return null;
  const query = new URLSearchParams(window.location.search);
  const code = query.get('code');
  const error = query.get('error');
  if (!code && !error) return null;
  const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) ?? 'null') as
    | { verifier: string; state: string; returnHash: string }
    | null;
  sessionStorage.removeItem(PKCE_KEY);
  const clean = (hash: string) => window.history.replaceState(null, '', `${window.location.pathname}${hash || '#/datasources'}`);
  if (error) {
    clean('#/signin');
    return `Sign-in failed: ${query.get('error_description') ?? error}`;
  }
  if (!saved || saved.state !== query.get('state')) {
    clean('#/signin');
    return 'Sign-in failed: the answer did not match the request. Please sign in again.';
  }
  try {
    // On the console's own origin when deployed (D29): the CSP lets the page fetch nothing else.
    const res = await fetch(config.auth.tokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: config.auth.clientId,
        code: code!,
        code_verifier: saved.verifier,
        redirect_uri: redirectUri(),
      }),
    });
    const body = (await res.json()) as { access_token?: string; error?: string };
    if (!res.ok || !body.access_token) {
      clean('#/signin');
      return `Sign-in failed: ${body.error ?? res.status}`;
    }
    setToken(body.access_token);
    clean(saved.returnHash);
    return null;
  } catch {
    clean('#/signin');
    return 'Sign-in failed: the sign-in service could not be reached.';
  }
}

export function signOut(config: AppConfig): void {
  setToken(null);
  if (config.auth.mode === 'cognito') {
    const params = new URLSearchParams({ client_id: config.auth.clientId, logout_uri: redirectUri() });
    window.location.assign(`${config.auth.domain}/logout?${params}`);
  } else {
    window.location.hash = '#/signin';
  }
}
