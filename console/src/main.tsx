import { render } from 'preact';
import './styles.css';
import { loadConfig } from './config';
import { createClient } from './api/client';
import { setClient } from './api/endpoints';
import { completeCognitoSignIn, expireSession, getToken } from './auth/session';
import { setBusy } from './state/busy';
import { App } from './App';

async function start() {
  const config = await loadConfig();
  const notice = await completeCognitoSignIn(config);
  setClient(
    createClient({
      apiBase: config.apiBase,
      getToken,
      onBusy: (seconds) => setBusy(seconds),
      onBusyEnd: () => setBusy(null),
      onUnauthorized: () => {
        if (getToken()) expireSession('Your session has expired or the token was refused. Please sign in again.');
      },
    }),
  );
  render(<App config={config} initialNotice={notice} />, document.getElementById('app')!);
}

void start();
