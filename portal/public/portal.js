/* global Element, document, fetch, navigator, sessionStorage, setTimeout, window -- browser script, loaded by the portal pages */
/* Shared by every portal and docs page: portal API calls, copy buttons, log out, announcements. */
(function () {
  'use strict';

  /** Calls the portal JSON API (same origin, so the session cookie and the Origin check just work). */
  async function api(method, path, body) {
    const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch('/portal/api' + path, init);
    } catch {
      return { ok: false, status: 0, error: { code: 'network_error', message: 'Could not reach the portal. Check your connection and try again.' } };
    }
    let data = null;
    if (res.status !== 204) {
      try {
        data = await res.json();
      } catch {
        data = null;
      }
    }
    if (res.ok) return { ok: true, status: res.status, data, headers: res.headers };
    const error =
      data && typeof data.code === 'string' && typeof data.message === 'string'
        ? data
        : { code: 'unexpected', message: 'Something went wrong on our side (HTTP ' + res.status + '). Please try again.' };
    return { ok: false, status: res.status, error };
  }

  let liveRegion;
  /** Tells screen-reader users about something that happened without moving their focus. */
  function announce(message) {
    if (!liveRegion) {
      liveRegion = document.createElement('p');
      liveRegion.className = 'visually-hidden';
      liveRegion.setAttribute('role', 'status');
      (document.querySelector('main') || document.body).appendChild(liveRegion);
    }
    liveRegion.textContent = '';
    setTimeout(function () {
      liveRegion.textContent = message;
    }, 50);
  }

  /** Copies text; falls back to a hidden textarea where the Clipboard API is missing (plain http). */
  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        return true;
      } catch {
        /* fall through to the fallback */
      }
    }
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.appendChild(area);
    area.select();
    let done = false;
    try {
      done = document.execCommand('copy');
    } catch {
      done = false;
    }
    area.remove();
    return done;
  }

  /** Marks a submit button busy (and back); its label comes from data-busy-label. */
  function setBusy(button, busy) {
    if (!button) return;
    if (busy) {
      button.dataset.idleLabel = button.textContent;
      button.textContent = button.dataset.busyLabel || button.textContent;
      button.setAttribute('aria-disabled', 'true');
      button.disabled = true;
    } else {
      if (button.dataset.idleLabel) button.textContent = button.dataset.idleLabel;
      button.removeAttribute('aria-disabled');
      button.disabled = false;
    }
  }

  /** Builds an element: attributes by name (`text` sets its text), then its children (nodes or strings). */
  function el(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value);
    }
    for (const child of children || []) node.append(child);
    return node;
  }

  /** Shows a message under a form field and marks the field invalid; an empty message clears both. */
  function setFieldError(input, error, message) {
    error.textContent = message;
    error.hidden = !message;
    if (message) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }

  /** Forgets every API key this tab holds (code-samples.js, keys.js): all the portal keeps in sessionStorage is a key or its hand-off. */
  function forgetTabKeys() {
    try {
      sessionStorage.clear();
    } catch {
      // Storage is blocked: nothing was kept.
    }
  }

  /** Sends the visitor to the login page, to come back to `next` (a portal path) once logged in. */
  function goToLogin(next) {
    window.location.assign('/portal/login?next=' + encodeURIComponent(next));
  }

  document.addEventListener('click', async function (event) {
    const target = event.target instanceof Element ? event.target : null;
    if (!target) return;

    const copy = target.closest('button[data-copy]');
    if (copy) {
      const source = document.getElementById(copy.dataset.copy);
      if (!source) return;
      const ok = await copyText(source.textContent.trim());
      const label = copy.textContent;
      copy.textContent = ok ? 'Copied' : 'Press Ctrl+C';
      announce(ok ? 'Copied to the clipboard.' : 'Could not copy automatically; select the text and copy it.');
      setTimeout(function () {
        copy.textContent = label;
      }, 2000);
      return;
    }

    const logout = target.closest('button[data-action="logout"]');
    if (logout) {
      logout.disabled = true;
      // Whatever the server answers: the developer is leaving, and the tab's keys leave with them.
      forgetTabKeys();
      const result = await api('POST', '/logout');
      if (result.ok) {
        window.location.assign('/portal/login?signedout=1');
      } else {
        logout.disabled = false;
        announce('Could not log out: ' + result.error.message);
      }
    }
  });

  window.AsgPortal = Object.freeze({ api, announce, copyText, setBusy, el, setFieldError, goToLogin, forgetTabKeys });
})();
