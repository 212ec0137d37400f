// The tenant and user a token names, decoded for the header only.
import { describe, expect, it } from 'vitest';
import { identity, tokenClaims } from '../src/auth/claims';
import { jwt } from './support/jwt';

describe('identity', () => {
  it('names the tenant claim and the sub', () => {
    const token = jwt({ sub: 'dev-acme', tenant_id: 'acme', exp: 1 });
    expect(identity(token)).toEqual({ tenant: 'acme', user: 'dev-acme' });
    expect(identity(jwt({ sub: 'u-1', 'custom:tenant': 'globex' }), 'custom:tenant')).toEqual({ tenant: 'globex', user: 'u-1' });
  });

  it('reads base64url payloads with any characters', () => {
    // "ü" and "?" make base64 use the characters base64url replaces.
    const token = jwt({ sub: 'jürgen??>>', tenant_id: 'münchen' });
    expect(token.split('.')[1]).toMatch(/[-_]/);
    expect(identity(token)).toEqual({ tenant: 'münchen', user: 'jürgen??>>' });
  });

  it('leaves out what the token does not say', () => {
    expect(identity(jwt({ tenant_id: 42 }))).toEqual({ tenant: null, user: null });
    expect(identity(jwt({ sub: '' }))).toEqual({ tenant: null, user: null });
  });

  it('is null for no token or one that is not a JWT', () => {
    expect(identity(null)).toBeNull();
    for (const bad of ['', 'abc', 'a.b', 'a.!!!.c', `x.${btoa('[1,2]')}.y`, `x.${btoa('not json')}.y`, 'a..c']) {
      expect(tokenClaims(bad), bad).toBeNull();
      expect(identity(bad), bad).toBeNull();
    }
  });
});
