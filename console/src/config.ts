// Runtime configuration from config.json beside index.html. Only a config.json that says
// `"mode":"local"` makes the console local (development tokens, `#/signin?token=`): the local
// API server serves one; a build carries none. Missing or unreadable means no sign-in at all.
//
// The console speaks to its own origin (D29): `apiBase` "" (the default) is the page's origin,
// where the local API server, Vite's proxy and the console's CloudFront distribution (its
// /api/* behaviour) all serve the API; the deployed config.json names the token endpoint
// `/oauth2/token`, which the distribution passes to Cognito. The sign-in pages themselves stay
// on `domain`: the console navigates there, it does not fetch them.

export type AuthConfig =
  | { mode: 'local' }
  | {
      mode: 'cognito';
      /** The hosted sign-in's base URL: the console navigates to its /oauth2/authorize and /logout. */
      domain: string;
      /**
       * Where the authorization code is exchanged (fetched, so the CSP's connect-src must allow
       * it): config.json's `tokenEndpoint`, `/oauth2/token` on the console's own origin when
       * deployed; `{domain}/oauth2/token` when config.json names none.
       */
      tokenEndpoint: string;
      clientId: string;
      scopes: string[];
    }
  | { mode: 'none' };

export interface AppConfig {
  /** Base URL of the API: "" (missing or empty in config.json) is the console's own origin. */
  apiBase: string;
  auth: AuthConfig;
  /** The claim that names the tenant (the API's TENANT_CLAIM); shown in the header. */
  tenantClaim: string;
}

export const DEFAULT_TENANT_CLAIM = 'tenant_id';

/** What the console runs with when config.json is missing or says nothing it understands. */
export const UNCONFIGURED: AppConfig = { apiBase: '', auth: { mode: 'none' }, tenantClaim: DEFAULT_TENANT_CLAIM };

export function parseConfig(raw: unknown): AppConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return UNCONFIGURED;
  const r = raw as Record<string, unknown>;
  const apiBase = typeof r.apiBase === 'string' ? r.apiBase.replace(/\/$/, '') : '';
  const tenantClaim = typeof r.tenantClaim === 'string' && r.tenantClaim ? r.tenantClaim : DEFAULT_TENANT_CLAIM;
  const auth = r.auth as Record<string, unknown> | undefined;
  if (auth && auth.mode === 'cognito' && typeof auth.domain === 'string' && typeof auth.clientId === 'string') {
    const scopes = Array.isArray(auth.scopes) ? auth.scopes.filter((s): s is string => typeof s === 'string') : ['openid'];
    const domain = auth.domain.replace(/\/$/, '');
    const tokenEndpoint =
      typeof auth.tokenEndpoint === 'string' && auth.tokenEndpoint ? auth.tokenEndpoint.replace(/\/$/, '') : `${domain}/oauth2/token`;
    return { apiBase, tenantClaim, auth: { mode: 'cognito', domain, tokenEndpoint, clientId: auth.clientId, scopes } };
  }
  if (auth && auth.mode === 'local') return { apiBase, tenantClaim, auth: { mode: 'local' } };
  return { apiBase, tenantClaim, auth: { mode: 'none' } };
}

export async function loadConfig(fetchFn: typeof fetch = fetch): Promise<AppConfig> {
  try {
    const res = await fetchFn('config.json', { cache: 'no-store' });
    if (!res.ok) return UNCONFIGURED;
    return parseConfig(await res.json());
  } catch {
    return UNCONFIGURED;
  }
}
