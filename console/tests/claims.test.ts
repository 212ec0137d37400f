// The tenant, user and groups a token names, decoded for display only.
import { describe, expect, it } from 'vitest';
import { groupsOf, identity, isAdmin, tokenClaims } from '../src/auth/claims';
import { jwt } from './support/jwt';

describe('identity', () => {
  it('names the tenant claim and the sub', () => {
    const token = jwt({ sub: 'dev-acme', tenant_id: 'acme', exp: 1 });
    expect(identity(token)).toEqual({ tenant: 'acme', user: 'dev-acme', groups: [] });
    expect(identity(jwt({ sub: 'u-1', 'custom:tenant': 'globex' }), 'custom:tenant')).toEqual({ tenant: 'globex', user: 'u-1', groups: [] });
  });

  it('reads base64url payloads with any characters', () => {
    // "ü" and "?" make base64 use the characters base64url replaces.
    const token = jwt({ sub: 'jürgen??>>', tenant_id: 'münchen' });
    expect(token.split('.')[1]).toMatch(/[-_]/);
    expect(identity(token)).toEqual({ tenant: 'münchen', user: 'jürgen??>>', groups: [] });
  });

  it('leaves out what the token does not say', () => {
    expect(identity(jwt({ tenant_id: 42 }))).toEqual({ tenant: null, user: null, groups: [] });
    expect(identity(jwt({ sub: '' }))).toEqual({ tenant: null, user: null, groups: [] });
  });

  it('is null for no token or one that is not a JWT', () => {
    expect(identity(null)).toBeNull();
    for (const bad of ['', 'abc', 'a.b', 'a.!!!.c', `x.${btoa('[1,2]')}.y`, `x.${btoa('not json')}.y`, 'a..c']) {
      expect(tokenClaims(bad), bad).toBeNull();
      expect(identity(bad), bad).toBeNull();
    }
  });
});

describe('groups', () => {
  const groups = (claim: unknown) => identity(jwt({ sub: 'u-1', tenant_id: 'acme', 'cognito:groups': claim }))?.groups;

  it('reads the list of cognito:groups', () => {
    expect(groups(['admins', 'operators'])).toEqual(['admins', 'operators']);
    expect(groups([])).toEqual([]);
  });

  it('is none when the claim is absent (a user in no group)', () => {
    expect(identity(jwt({ sub: 'u-1', tenant_id: 'acme' }))?.groups).toEqual([]);
    expect(groups(null)).toEqual([]);
  });

  it('never splits a string, neither as the claim nor as a group', () => {
    expect(groups('admins')).toEqual([]);
    expect(groups('admins,operators')).toEqual([]);
    expect(groups('admins operators')).toEqual([]);
    expect(groups(['sales,admins', 'admins operators'])).toEqual(['sales,admins', 'admins operators']);
  });

  it('leaves out what is not a string', () => {
    expect(groups(['admins', 1, null, true, ['operators'], { name: 'admins' }, 'operators'])).toEqual(['admins', 'operators']);
    expect(groups({ 0: 'admins', length: 1 })).toEqual([]);
    expect(groups(42)).toEqual([]);
    expect(groupsOf(undefined)).toEqual([]);
  });
});

describe('isAdmin', () => {
  const who = (claim: unknown) => identity(jwt({ sub: 'u-1', tenant_id: 'acme', 'cognito:groups': claim }));

  it('is true for a member of admins only', () => {
    expect(isAdmin(who(['admins']))).toBe(true);
    expect(isAdmin(who(['operators', 'admins']))).toBe(true);
    expect(isAdmin(who(['operators']))).toBe(false);
    expect(isAdmin(who([]))).toBe(false);
    expect(isAdmin(identity(jwt({ sub: 'u-1', tenant_id: 'acme' })))).toBe(false);
  });

  it('matches the whole name of a group, as given', () => {
    for (const claim of ['admins', 'admins,operators', ['sales,admins'], ['admins '], ['Admins'], ['admin']]) {
      expect(isAdmin(who(claim)), JSON.stringify(claim)).toBe(false);
    }
  });

  it('is false without an identity', () => {
    expect(isAdmin(null)).toBe(false);
    expect(isAdmin(undefined)).toBe(false);
    expect(isAdmin(identity('not a token'))).toBe(false);
  });
});
