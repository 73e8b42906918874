/* global Element, document, sessionStorage, window -- browser script, loaded by the portal pages */
/* The keys page: list, create (secret shown once), hand a new key to the API explorer, roll, revoke. */
(function () {
  'use strict';
  const portal = window.AsgPortal;
  if (!portal) return;
  const el = portal.el;

  /** Read once by docs-explorer.js on the docs page of this tab, and removed there at once. */
  const EXPLORER_HANDOFF_KEY = 'asg:explorer-key';

  const $ = (selector) => document.querySelector(selector);
  const form = $('#create-key');
  const createError = $('#create-error');
  const nameInput = $('#key-name');
  const nameError = $('#key-name-error');
  const secretPanel = $('#secret-panel');
  const secretInput = $('#secret-value');
  const secretMeta = $('[data-secret-meta]');
  const copyStatus = $('[data-copy-status]');
  const listTitle = $('#list-title');
  const listStatus = $('[data-list-status]');
  const listError = $('#list-error');
  const table = $('[data-keys-table]');
  const tbody = $('[data-keys-body]');
  const revokeDialog = $('#revoke-dialog');
  const rollDialog = $('#roll-dialog');

  /** The one secret this page knows, only while its panel is open. */
  let issued = null;
  let copied = false;
  let keys = [];

  const ENVIRONMENTS = { production: 'Production', staging: 'Staging' };
  const STATUS = { active: 'Active', revoked: 'Revoked', expired: 'Expired' };
  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
  const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const countFormat = new Intl.NumberFormat();
  /**
   * The deprecated operation `usage.deprecatedCalls` counts today, with its sunset: the page
   * writes them from openapi/animal-store.yaml into the table's data attributes.
   */
  const contract = table.dataset;
  const DEPRECATED = {
    operation: (prefix) => contract.deprecatedMethod + ' ' + prefix + contract.deprecatedPath,
    replacement: (prefix) => 'GET ' + prefix + '/pets',
    sunset: contract.sunset,
    sunsetText: contract.sunsetText,
    noticeUrl: '/portal/deprecations',
  };
  const PREFIXES = { production: contract.prefixProduction, staging: contract.prefixStaging };

  function showError(element, message) {
    element.textContent = message;
    element.hidden = false;
    element.focus();
  }

  /** A failed call sends a lapsed session to the login page and shows any other error in `element`; true when it failed. */
  function failed(result, element, what) {
    if (result.ok) return false;
    if (result.status === 401) portal.goToLogin('/portal/keys');
    else showError(element, 'Could not ' + what + ': ' + result.error.message);
    return true;
  }

  function timeCell(iso, mode) {
    if (!iso) return document.createTextNode('Never');
    const date = new Date(iso);
    let text = mode === 'used' ? dateTimeFormat.format(date) : dateFormat.format(date);
    if (mode === 'used') {
      const minutes = Math.round((date.getTime() - Date.now()) / 60000);
      if (Math.abs(minutes) < 1) text = 'Just now';
      else if (Math.abs(minutes) < 60) text = relative.format(minutes, 'minute');
      else if (Math.abs(minutes) < 24 * 60) text = relative.format(Math.round(minutes / 60), 'hour');
    }
    return el('time', { datetime: iso, title: dateTimeFormat.format(date), text });
  }

  /** Under a key that still calls a deprecated operation: what, how often, until when, and what to use instead. */
  function deprecationWarning(key, columns) {
    const usage = key.usage;
    const prefix = PREFIXES[key.environment] || PREFIXES.production;
    const times = usage.deprecatedCalls === 1 ? ' once' : ' ' + countFormat.format(usage.deprecatedCalls) + ' times';
    const last = usage.lastDeprecatedCallAt
      ? [', last on ', el('time', { datetime: usage.lastDeprecatedCallAt, title: dateTimeFormat.format(new Date(usage.lastDeprecatedCallAt)), text: dateFormat.format(new Date(usage.lastDeprecatedCallAt)) })]
      : [];
    const text = el('p', { id: 'usage-warning-' + key.id }, [
      el('strong', { text: 'Action needed: ' }),
      'This key called the deprecated ',
      el('code', { text: DEPRECATED.operation(prefix) }),
      times,
      ...last,
      '. That operation stops working on ',
      el('time', { datetime: DEPRECATED.sunset, text: DEPRECATED.sunsetText }),
      ' — use ',
      el('code', { text: DEPRECATED.replacement(prefix) }),
      ' instead. ',
      el('a', { href: DEPRECATED.noticeUrl, text: 'How to migrate' }),
    ]);
    return el('tr', { class: 'usage-warning-row', 'data-usage-warning-for': key.id }, [
      el('td', { colspan: String(columns), class: 'usage-warning-cell' }, [el('div', { class: 'callout callout-warning usage-warning' }, [text])]),
    ]);
  }

  /** "in 23 hours", "in 3 days": how long until an instant, to the unit that reads best. */
  function fromNow(iso) {
    const minutes = Math.round((new Date(iso).getTime() - Date.now()) / 60000);
    if (Math.abs(minutes) < 60) return relative.format(minutes, 'minute');
    if (Math.abs(minutes) < 48 * 60) return relative.format(Math.round(minutes / 60), 'hour');
    return relative.format(Math.round(minutes / (24 * 60)), 'day');
  }

  /** The status badge, and what a roll or a near expiry adds to it. */
  function statusCell(key) {
    const byId = (id) => keys.find((k) => k.id === id);
    const cell = el('td', { 'data-label': 'Status' }, [el('span', { class: 'badge badge-' + key.status, text: STATUS[key.status] || key.status })]);
    if (key.status !== 'active') return cell;
    const successor = key.rolledTo && byId(key.rolledTo);
    if (successor) {
      cell.append(el('span', { class: 'key-note', 'data-rolled-to': key.rolledTo }, [
        'Rolled to ', el('code', { text: successor.prefix + '…' }), '; works until it expires ', el('time', { datetime: key.expiresAt, title: dateTimeFormat.format(new Date(key.expiresAt)), text: fromNow(key.expiresAt) }),
      ]));
    } else if (key.expiresSoon) {
      cell.append(' ', el('span', { class: 'badge badge-expiring', 'data-expires-soon': '', text: 'Expires ' + fromNow(key.expiresAt) }));
    }
    const predecessor = key.rolledFrom && byId(key.rolledFrom);
    if (predecessor) cell.append(el('span', { class: 'key-note', 'data-rolled-from': key.rolledFrom }, ['Replaces ', el('code', { text: predecessor.prefix + '…' })]));
    return cell;
  }

  function rows(key) {
    const main = row(key);
    if (!key.usage || key.usage.deprecatedCalls <= 0) return [main];
    // The key's name cell is described by the warning, so it is heard with the key, not only after the row.
    main.classList.add('has-usage-warning');
    main.querySelector('th').setAttribute('aria-describedby', 'usage-warning-' + key.id);
    return [main, deprecationWarning(key, main.children.length)];
  }

  /** The key's request count, linking to its daily usage below (usage-chart.js swaps the section in place). */
  function usageLink(key) {
    const requests = countFormat.format(key.usage ? key.usage.requests : 0);
    return el('a', {
      href: '/portal/keys?usage=' + encodeURIComponent(key.id) + '#usage',
      'data-usage-link': '',
      'aria-label': requests + ' requests: daily usage of key ' + key.name,
      title: 'Requests per day',
      text: requests,
    });
  }

  function row(key) {
    const actions = el('td', { 'data-label': 'Actions', class: 'cell-actions' });
    // key-requests.js opens the page's "Recent requests" panel for it.
    actions.append(
      el('button', { type: 'button', class: 'button button-small', 'data-show-requests': key.id, 'aria-controls': 'requests-panel' }, [
        'Requests',
        el('span', { class: 'visually-hidden', text: ' of key ' + key.name }),
      ]),
    );
    if (key.status === 'active' && !key.rolledTo) {
      actions.append(
        el('button', { type: 'button', class: 'button button-small', 'data-roll': key.id }, ['Roll', el('span', { class: 'visually-hidden', text: ' key ' + key.name })]),
        ' ',
      );
    }
    if (key.status === 'active') {
      const button = el('button', { type: 'button', class: 'button button-small button-danger-outline', 'data-revoke': key.id }, [
        'Revoke',
        el('span', { class: 'visually-hidden', text: ' key ' + key.name }),
      ]);
      actions.append(button);
    }
    return el('tr', { 'data-key-id': key.id, 'data-status': key.status }, [
      el('th', { scope: 'row', 'data-label': 'Name', class: 'cell-name', text: key.name }),
      el('td', { 'data-label': 'Environment' }, [el('span', { class: 'badge badge-' + key.environment, text: ENVIRONMENTS[key.environment] || key.environment })]),
      el('td', { 'data-label': 'Key' }, [el('code', { class: 'prefix', text: key.prefix + '…' })]),
      el('td', { 'data-label': 'Created' }, [timeCell(key.createdAt, 'date')]),
      el('td', { 'data-label': 'Last used' }, [timeCell(key.lastUsedAt, 'used')]),
      el('td', { 'data-label': 'Requests', class: 'cell-number' }, [usageLink(key)]),
      el('td', { 'data-label': 'Expires' }, [timeCell(key.expiresAt, 'date')]),
      statusCell(key),
      actions,
    ]);
  }

  // The panels that follow the list (key-requests.js) are deferred scripts after this one: all of
  // them have run by DOMContentLoaded, and a list fetched sooner must not be announced before.
  const laterScriptsRun = new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, { once: true }));

  function render() {
    tbody.replaceChildren(...keys.flatMap(rows));
    table.hidden = keys.length === 0;
    const active = keys.filter((k) => k.status === 'active').length;
    listStatus.textContent =
      keys.length === 0
        ? 'No keys yet. Create your first key above.'
        : keys.length + (keys.length === 1 ? ' key, ' : ' keys, ') + active + ' active.';
    // Other panels of the page (key-requests.js) follow the list.
    const listed = keys;
    laterScriptsRun.then(() => document.dispatchEvent(new window.CustomEvent('asg:keys-listed', { detail: listed })));
  }

  async function loadKeys() {
    const result = await portal.api('GET', '/keys');
    if (failed(result, listError, 'load your keys')) {
      listStatus.textContent = '';
      return;
    }
    listError.hidden = true;
    keys = result.data;
    render();
    if (keys.length === 0 && !nameInput.value) nameInput.value = 'My first key';
  }

  function setNameError(message) {
    portal.setFieldError(nameInput, nameError, message);
  }

  function closeSecret() {
    issued = null;
    copied = false;
    secretInput.value = '';
    copyStatus.textContent = '';
    secretPanel.hidden = true;
  }

  form.addEventListener('submit', async function (event) {
    event.preventDefault();
    createError.hidden = true;
    setNameError('');
    const name = nameInput.value.trim();
    if (!name) {
      setNameError('Enter a name for the key.');
      nameInput.focus();
      return;
    }
    const body = { name, environment: form.elements.namedItem('environment').value };
    const expiry = form.elements.namedItem('expiresInDays').value;
    if (expiry) body.expiresInDays = Number(expiry);

    const submit = form.querySelector('button[type="submit"]');
    portal.setBusy(submit, true);
    const result = await portal.api('POST', '/keys', body);
    portal.setBusy(submit, false);
    if (!result.ok && result.error.code === 'invalid_request' && /^name\b/.test(result.error.message)) {
      setNameError('Use 1 to 100 characters, some of them visible, without control or text-direction override characters.');
      nameInput.focus();
      return;
    }
    if (failed(result, createError, 'create the key')) return;
    showSecret(result.data);
    form.reset();
    loadKeys();
  });

  /** Opens the once-only panel with a new secret (a created or a rolled key). */
  function showSecret(key) {
    issued = key;
    copied = false;
    secretInput.value = issued.key;
    secretMeta.textContent = '(' + (ENVIRONMENTS[issued.environment] || issued.environment) + ', “' + issued.name + '”)';
    copyStatus.textContent = '';
    secretPanel.hidden = false;
    secretPanel.scrollIntoView({ block: 'start' });
    $('#secret-title').focus();
  }

  nameInput.addEventListener('input', function () {
    if (nameInput.getAttribute('aria-invalid') === 'true') setNameError('');
  });

  secretInput.addEventListener('focus', function () {
    secretInput.select();
  });

  secretPanel.addEventListener('click', async function (event) {
    const action = event.target instanceof Element && event.target.closest('button[data-action]');
    if (!action || !issued) return;
    if (action.dataset.action === 'copy-secret') {
      const ok = await portal.copyText(issued.key);
      copied = copied || ok;
      copyStatus.textContent = ok ? 'Copied to the clipboard.' : 'Could not copy automatically: select the key and press Ctrl+C (⌘C on a Mac).';
      if (!ok) secretInput.select();
    } else if (action.dataset.action === 'explore') {
      // This tab only: sessionStorage, read and deleted by the docs page; never localStorage, never the URL.
      sessionStorage.setItem(
        EXPLORER_HANDOFF_KEY,
        JSON.stringify({ key: issued.key, environment: issued.environment, name: issued.name, prefix: issued.prefix }),
      );
      closeSecret();
      window.location.assign('/docs/#/Pets/listPets');
    } else if (action.dataset.action === 'saved') {
      if (!copied && !window.confirm('You have not copied this key. It cannot be shown again. Hide it anyway?')) return;
      closeSecret();
      listTitle.focus();
      portal.announce('The key is hidden. It is listed below by its prefix.');
    }
  });

  /** Both confirmations name the key and show its prefix; the dialog remembers which key it asks about. */
  function confirmKey(which, key) {
    which.querySelector('[data-key-name]').textContent = '“' + key.name + '”';
    which.querySelector('[data-key-prefix]').textContent = key.prefix;
    which.dataset.keyId = key.id;
    which.returnValue = '';
    which.showModal();
  }

  /** The key a closed dialog asked about, when the user chose `action`; null for Cancel or Escape. */
  function confirmedKey(which, action) {
    if (which.returnValue !== action) return null;
    return keys.find((k) => k.id === which.dataset.keyId) || null;
  }

  tbody.addEventListener('click', function (event) {
    const button = event.target instanceof Element && event.target.closest('button[data-roll], button[data-revoke]');
    const key = button && keys.find((k) => k.id === (button.dataset.roll ?? button.dataset.revoke));
    if (key) confirmKey(button.dataset.roll === undefined ? revokeDialog : rollDialog, key);
  });

  revokeDialog.addEventListener('close', async function () {
    const key = confirmedKey(revokeDialog, 'revoke');
    if (!key) return;
    const result = await portal.api('DELETE', '/keys/' + encodeURIComponent(key.id));
    if (failed(result, listError, 'revoke “' + key.name + '”')) return;
    await loadKeys();
    listTitle.focus();
    portal.announce('Key “' + key.name + '” revoked. Requests with it are now refused.');
  });

  rollDialog.addEventListener('close', async function () {
    const key = confirmedKey(rollDialog, 'roll');
    if (!key) return;
    const overlap = rollDialog.querySelector('input[name="overlap"]:checked').value;
    const result = await portal.api('POST', '/keys/' + encodeURIComponent(key.id) + '/roll', { overlap });
    if (failed(result, listError, 'roll “' + key.name + '”')) return;
    showSecret(result.data);
    await loadKeys();
    portal.announce(overlap === 'none' ? 'Key “' + key.name + '” rolled; the old secret no longer works.' : 'Key “' + key.name + '” rolled; the old secret works until the overlap ends.');
  });

  window.addEventListener('pagehide', closeSecret);
  loadKeys();
})();
