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
    expect(config.auth).toEqual({ mode: 'cognito', domain: 'https://x.auth.example', clientId: 'c1', scopes: ['openid', 'outbound/read'] });
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
