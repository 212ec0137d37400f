// @vitest-environment happy-dom
// The Cognito sign-in's return: the code is exchanged at config.json's token endpoint, on the
// console's own origin when deployed (D29: connect-src 'self'), never at the sign-in domain
// the console navigated to.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { completeCognitoSignIn, getToken, setToken } from '../src/auth/session';
import { parseConfig } from '../src/config';

const DEPLOYED = parseConfig({
  apiBase: '',
  auth: { mode: 'cognito', domain: 'https://x.auth.example', tokenEndpoint: '/oauth2/token', clientId: 'c1', scopes: ['openid'] },
});

interface Exchange {
  url: string;
  method: string;
  form: URLSearchParams;
}

function returnFromSignIn(query: string) {
  sessionStorage.setItem('outbound.pkce', JSON.stringify({ verifier: 'v'.repeat(64), state: 's1', returnHash: '#/tasks' }));
  window.history.replaceState(null, '', `/${query}`);
}

/** A token endpoint answering `answer`; returns the exchanges it was sent. */
function tokenEndpoint(answer: () => Response): Exchange[] {
  const sent: Exchange[] = [];
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    sent.push({ url: String(input), method: init?.method ?? 'GET', form: new URLSearchParams(String(init?.body ?? '')) });
    return answer();
  });
  return sent;
}

beforeEach(() => sessionStorage.clear());

afterEach(() => {
  vi.unstubAllGlobals();
  setToken(null);
  window.history.replaceState(null, '', '/');
});

describe('completeCognitoSignIn', () => {
  it('exchanges the code at the token endpoint on the own origin and keeps the access token', async () => {
    returnFromSignIn('?code=abc&state=s1');
    const sent = tokenEndpoint(() => Response.json({ access_token: 'at', id_token: 'it', token_type: 'Bearer' }));
    expect(await completeCognitoSignIn(DEPLOYED)).toBeNull();
    expect(sent).toHaveLength(1);
    expect(sent[0].url).toBe('/oauth2/token');
    expect(sent[0].method).toBe('POST');
    expect(Object.fromEntries(sent[0].form)).toEqual({
      grant_type: 'authorization_code',
      client_id: 'c1',
      code: 'abc',
      code_verifier: 'v'.repeat(64),
      redirect_uri: `${window.location.origin}/`,
    });
    expect(getToken()).toBe('at');
    // The code leaves the address bar; the person is back where they were.
    expect(window.location.search).toBe('');
    expect(window.location.hash).toBe('#/tasks');
  });

  it('reports a refused exchange and keeps no token', async () => {
    returnFromSignIn('?code=abc&state=s1');
    tokenEndpoint(() => Response.json({ error: 'invalid_grant' }, { status: 400 }));
    expect(await completeCognitoSignIn(DEPLOYED)).toBe('Sign-in failed: invalid_grant');
    expect(getToken()).toBeNull();
  });

  it('sends nothing when the answer does not match the request', async () => {
    returnFromSignIn('?code=abc&state=other');
    const sent = tokenEndpoint(() => Response.json({ access_token: 'at' }));
    expect(await completeCognitoSignIn(DEPLOYED)).toMatch(/did not match/);
    expect(sent).toEqual([]);
    expect(getToken()).toBeNull();
  });
});
