// config.json: only an explicit local mode is local; anything missing or unknown signs no one in.
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, UNCONFIGURED } from '../src/config';

describe('parseConfig', () => {
  it('is local only when config.json says so', () => {
    expect(parseConfig({ apiBase: '', auth: { mode: 'local' } })).toEqual({
      apiBase: '',
      auth: { mode: 'local' },
      tenantClaim: 'tenant_id',
    });
    expect(parseConfig({ apiBase: 'https://api.example/', auth: { mode: 'local' }, tenantClaim: 'custom:tenant' })).toEqual({
      apiBase: 'https://api.example',
      auth: { mode: 'local' },
      tenantClaim: 'custom:tenant',
    });
  });

  it('reads a Cognito sign-in', () => {
    const config = parseConfig({
      apiBase: 'https://api.example',
      auth: { mode: 'cognito', domain: 'https://x.auth.example/', clientId: 'c1', scopes: ['openid', 'outbound/read', 3] },
    });
    expect(config.auth).toEqual({
      mode: 'cognito',
      domain: 'https://x.auth.example',
      tokenEndpoint: 'https://x.auth.example/oauth2/token',
      clientId: 'c1',
      scopes: ['openid', 'outbound/read'],
    });
  });

  // D29: the deployed console calls the API and Cognito's token endpoint on its own origin.
  it('reads the deployed config.json: the API and the token endpoint on the own origin', () => {
    const deployed = parseConfig({
      apiBase: '',
      auth: { mode: 'cognito', domain: 'https://x.auth.example', tokenEndpoint: '/oauth2/token', clientId: 'c1', scopes: ['openid'] },
      tenantClaim: 'tenant_id',
    });
    expect(deployed.apiBase).toBe('');
    expect(deployed.auth).toEqual({
      mode: 'cognito',
      domain: 'https://x.auth.example',
      tokenEndpoint: '/oauth2/token',
      clientId: 'c1',
      scopes: ['openid'],
    });
  });

  it('takes the own origin for the API when config.json names none', () => {
    for (const apiBase of [undefined, '', null, 42]) {
      expect(parseConfig({ apiBase, auth: { mode: 'local' } }).apiBase, String(apiBase)).toBe('');
    }
    expect(UNCONFIGURED.apiBase).toBe('');
  });

  it('names the token endpoint beside the sign-in pages when config.json names none', () => {
    for (const tokenEndpoint of [undefined, '', 7]) {
      const config = parseConfig({ auth: { mode: 'cognito', domain: 'https://x.auth.example/', clientId: 'c1', tokenEndpoint } });
      expect(config.auth.mode === 'cognito' && config.auth.tokenEndpoint, String(tokenEndpoint)).toBe('https://x.auth.example/oauth2/token');
    }
  });

  it('is never local by default', () => {
    for (const raw of [null, undefined, 'local', 42, [], {}, { auth: {} }, { auth: { mode: 'LOCAL' } }, { auth: { mode: 'cognito' } }]) {
      expect(parseConfig(raw).auth, JSON.stringify(raw)).toEqual({ mode: 'none' });
    }
    expect(UNCONFIGURED.auth.mode).toBe('none');
  });
});

describe('loadConfig', () => {
  it('is unconfigured when config.json is missing, not JSON or unreachable', async () => {
    const missing = async () => new Response('not found', { status: 404 });
    const html = async () => new Response('<!doctype html>', { status: 200 });
    const down = async () => {
      throw new TypeError('network');
    };
    for (const fetchFn of [missing, html, down]) {
      expect(await loadConfig(fetchFn as unknown as typeof fetch)).toEqual(UNCONFIGURED);
    }
    const served = async () => Response.json({ apiBase: '', auth: { mode: 'local' } });
    expect((await loadConfig(served as unknown as typeof fetch)).auth.mode).toBe('local');
  });
});
