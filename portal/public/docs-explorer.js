/* global document, sessionStorage, setTimeout, window -- browser script, loaded by the portal pages */
/*
 * Picks up a key handed over by the keys page ("Use in API explorer") in this tab's
 * sessionStorage, deletes the hand-off at once, and authorizes Swagger UI with it. The code
 * samples keep it for this tab (code-samples.js: sessionStorage, gone with the tab, never in a
 * URL; persistAuthorization is off).
 */
(function () {
  'use strict';
  const HANDOFF_KEY = 'asg:explorer-key';
  const KEY_SHAPE = /^asg_(prod|stag)_[A-Za-z0-9_-]{43}$/;
  const status = document.querySelector('[data-explorer-status]');

  let handoff = null;
  try {
    const raw = sessionStorage.getItem(HANDOFF_KEY);
    sessionStorage.removeItem(HANDOFF_KEY);
    if (raw) handoff = JSON.parse(raw);
  } catch {
    handoff = null;
  }
  if (!handoff || typeof handoff.key !== 'string' || !KEY_SHAPE.test(handoff.key)) return;
  const environment = handoff.environment === 'staging' ? 'staging' : 'production';
  if (window.AsgCodeSamples) window.AsgCodeSamples.rememberKey({ ...handoff, environment });

  function say(message, tone) {
    if (!status) return;
    status.textContent = message;
    status.dataset.tone = tone;
  }

  const started = Date.now();
  (function authorizeWhenReady() {
    const ui = window.ui;
    const loaded = ui && ui.specSelectors && ui.specSelectors.specJson().get('openapi');
    if (!loaded) {
      if (Date.now() - started > 15000) {
        say('Could not authorize automatically. Press Authorize and paste your key.', 'warning');
        handoff = null;
        return;
      }
      setTimeout(authorizeWhenReady, 50);
      return;
    }
    ui.preauthorizeApiKey('bearerAuth', handoff.key);
    // The document names each server's environment (`x-environment`), so the key's own is picked.
    const servers = ui.specSelectors.specJson().get('servers');
    const server = servers && servers.find((s) => s.get('x-environment') === environment);
    if (server) ui.oas3Actions.setSelectedServer(server.get('url'));
    const authorized = Boolean(ui.authSelectors.authorized().get('bearerAuth'));
    const name = typeof handoff.name === 'string' ? handoff.name : 'your new key';
    const prefix = typeof handoff.prefix === 'string' ? handoff.prefix : '';
    handoff = null;
    if (!authorized) {
      say('Could not authorize automatically. Press Authorize and paste your key.', 'warning');
      return;
    }
    say(
      'Authorized in this tab with “' + name + '” (' + prefix + '…) on ' + (environment === 'staging' ? 'Staging' : 'Production') +
        '. Press Execute below to make your first call.',
      'success',
    );
  })();
})();
