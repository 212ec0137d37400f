import { useEffect, useState } from 'preact/hooks';
import type { AppConfig } from './config';
import { getToken, onSessionChange, setToken, signOut, takeNotice } from './auth/session';
import { identity } from './auth/claims';
import { navigate, useRoute } from './router';
import { Layout } from './components/Layout';
import { SignIn } from './pages/SignIn';
import { DataSourcesPage } from './pages/DataSources';
import { DataSourcePage } from './pages/DataSource';
import { TasksPage } from './pages/Tasks';
import { TaskPage } from './pages/Task';
import { SettingsPage } from './pages/Settings';
import { DncPage } from './pages/Dnc';

export function App(props: { config: AppConfig; initialNotice: string | null }) {
  const route = useRoute();
  const [token, setTokenState] = useState(getToken());
  const [notice, setNotice] = useState<string | null>(props.initialNotice);

  useEffect(
    () =>
      onSessionChange(() => {
        const t = getToken();
        setTokenState(t);
        if (!t) {
          const n = takeNotice();
          if (n) setNotice(n);
          if (props.config.auth.mode === 'local' || n) navigate('#/signin', true);
        }
      }),
    [],
  );

  // `#/signin?token=<jwt>` signs in directly on the local stack only, then takes the token out of
  // the address bar. Anywhere else such a link would sign a person in as whoever made it: the
  // token is dropped unused.
  const local = props.config.auth.mode === 'local';
  const urlToken = route.name === 'signin' ? route.query.get('token') : null;
  useEffect(() => {
    if (!urlToken) return;
    if (local) {
      setToken(urlToken);
      setNotice(null);
      navigate('#/datasources', true);
    } else {
      setNotice('A sign-in link with a token works only on the local stack. Sign in here instead.');
      navigate('#/signin', true);
    }
  }, [urlToken]);

  useEffect(() => {
    const main = document.getElementById('main');
    if (main && document.activeElement === document.body) main.scrollIntoView({ block: 'start' });
  }, [route.name, route.id]);

  const signedIn = !!token;
  const who = identity(token, props.config.tenantClaim);
  let page;
  if (!signedIn || route.name === 'signin') {
    if (signedIn && route.name === 'signin' && !(urlToken && local)) {
      navigate('#/datasources', true);
    }
    page = (
      <SignIn
        config={props.config}
        notice={notice}
        onSignedIn={() => {
          setNotice(null);
          navigate('#/datasources', true);
        }}
      />
    );
  } else {
    switch (route.name) {
      case 'datasource':
        page = <DataSourcePage id={route.id ?? ''} />;
        break;
      case 'tasks':
        page = <TasksPage />;
        break;
      case 'task':
        page = <TaskPage id={route.id ?? ''} />;
        break;
      case 'settings':
        page = <SettingsPage identity={who} />;
        break;
      case 'dnc':
        page = <DncPage identity={who} />;
        break;
      case 'datasources':
        page = <DataSourcesPage />;
        break;
      default:
        page = (
          <section>
            <h1>Page not found</h1>
            <p>
              There is no page here. Go to <a href="#/datasources">Data sources</a>.
            </p>
          </section>
        );
    }
  }

  return (
    <Layout
      route={route.name}
      signedIn={signedIn && route.name !== 'signin'}
      identity={who}
      onSignOut={() => signOut(props.config)}
    >
      {page}
    </Layout>
  );
}
