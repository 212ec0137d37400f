// Who the console is signed in as: the token's payload, decoded for display only. The API
// verifies every token and decides what the person may do; the groups read here only let a page
// show a member what they may not change instead of a button the API would refuse.

/** The group whose members may change the tenant's settings and delete do-not-call entries. */
export const ADMINS = 'admins';

export interface Identity {
  /** The tenant claim (`tenantClaim` of config.json, default `tenant_id`). */
  tenant: string | null;
  /** The user: the token's `sub`. */
  user: string | null;
  /** The groups `cognito:groups` names: none when it is absent (a user in no group) or not a list. */
  groups: string[];
}

/** The payload of a JWT (its middle part, base64url JSON), or null when it is not one. */
export function tokenClaims(token: string): Record<string, unknown> | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const payload: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The tenant and user a token names, or null when it cannot be read. */
export function identity(token: string | null, tenantClaim = 'tenant_id'): Identity | null {
  if (!token) return null;
  const claims = tokenClaims(token);
  if (!claims) return null;
  const text = (value: unknown) => (typeof value === 'string' && value ? value : null);
  return { tenant: text(claims[tenantClaim]), user: text(claims.sub), groups: groupsOf(claims['cognito:groups']) };
}

/**
 * The groups a `cognito:groups` claim names: its strings when it is a list (anything else in it
 * is left out), else none. A string is not a list of groups, and a group's name is never split
 * (`sales,operators` is one group, as the API reads it).
 */
export function groupsOf(claim: unknown): string[] {
  return Array.isArray(claim) ? claim.filter((g): g is string => typeof g === 'string') : [];
}

/** Whether the token names a member of `admins` (display only: the API answers 403 otherwise). */
export function isAdmin(who: Identity | null | undefined): boolean {
  return !!who?.groups.includes(ADMINS);
}
