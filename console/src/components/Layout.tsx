import type { ComponentChildren } from 'preact';
import type { Identity } from '../auth/claims';
import { useBusyMessage } from '../state/busy';

const LINKS = [
  { href: '#/datasources', label: 'Data sources', match: ['datasources', 'datasource'] },
  { href: '#/tasks', label: 'Tasks', match: ['tasks', 'task'] },
  { href: '#/settings', label: 'Settings', match: ['settings'] },
  { href: '#/dnc', label: 'Do-not-call list', match: ['dnc'] },
];

export function Layout(props: {
  route: string;
  signedIn: boolean;
  /** Who the token names, shown beside the sign-out button (display only). */
  identity?: Identity | null;
  onSignOut: () => void;
  children: ComponentChildren;
}) {
  const busy = useBusyMessage();
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">outbound</span>
        {props.signedIn && (
          <nav aria-label="Main">
            <ul>
              {LINKS.map((l) => (
                <li key={l.href}>
                  <a href={l.href} aria-current={l.match.includes(props.route) ? 'page' : undefined}>
                    {l.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {props.signedIn && props.identity && (
          <p class="identity">
            Tenant <strong>{props.identity.tenant ?? 'unknown'}</strong>
            <span aria-hidden="true"> · </span>
            User <strong>{props.identity.user ?? 'unknown'}</strong>
          </p>
        )}
        {props.signedIn && (
          <button type="button" class="secondary signout" onClick={props.onSignOut}>
            Sign out
          </button>
        )}
      </header>
      <div class="busy" role="status" aria-live="polite">
        {busy}
      </div>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
