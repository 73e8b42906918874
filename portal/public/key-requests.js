/* global Element, URL, document, window -- browser script, loaded by the keys page after keys.js */
/* The keys page's "Recent requests" panel: a key's request log, by outcome or request id, a page at a time. */
(function () {
  'use strict';
  const portal = window.AsgPortal;
  const panel = document.querySelector('[data-request-log]');
  if (!portal || !panel) return;

  const PAGE_SIZE = 50;
  const $ = (selector) => panel.querySelector(selector);
  const form = $('#requests-form');
  const keySelect = $('#requests-key');
  const statusSelect = $('#requests-status');
  const idInput = $('#requests-id');
  const idError = $('#requests-id-error');
  const errorBox = $('#requests-error');
  const title = $('#requests-title');
  const empty = $('[data-requests-empty]');
  const statusLine = $('[data-requests-status]');
  const wrap = $('[data-requests-wrap]');
  const caption = $('[data-requests-caption]');
  const tbody = $('[data-requests-body]');
  const more = $('[data-requests-more]');
  const submit = form.querySelector('button[type="submit"]');

  const ENVIRONMENTS = { production: 'Production', staging: 'Staging' };
  const OUTCOMES = { '2xx': '2xx success', '4xx': '4xx client errors', '429': '429 rate limited', '5xx': '5xx server errors' };
  const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  const latencyFormat = new Intl.NumberFormat(undefined, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const countFormat = new Intl.NumberFormat();

  /** The keys as keys.js last listed them. */
  let keys = [];
  /** What the table shows: the key, its filters, how many rows, and the cursor of the next page. */
  let shown = null;
  /** Answers to an older query are dropped when a newer one was asked. */
  let asked = 0;

  const el = portal.el;

  function keyLabel(key) {
    const details = [key.prefix + '…', ENVIRONMENTS[key.environment] || key.environment];
    if (key.status !== 'active') details.push(key.status);
    return key.name + ' (' + details.join(', ') + ')';
  }

  function statusClass(status) {
    if (status === 429) return '429';
    if (status >= 500) return '5xx';
    if (status >= 400) return '4xx';
    return '2xx';
  }

  function row(request) {
    return el('tr', { 'data-request-id': request.requestId }, [
      el('th', { scope: 'row', 'data-label': 'Time', tabindex: '-1' }, [el('time', { datetime: request.time, text: timeFormat.format(new Date(request.time)) })]),
      el('td', { 'data-label': 'Method', text: request.method }),
      el('td', { 'data-label': 'Path', class: 'cell-path' }, [el('code', { text: request.path })]),
      el('td', { 'data-label': 'Status' }, [el('span', { class: 'badge badge-status-' + statusClass(request.status), text: String(request.status) })]),
      el('td', { 'data-label': 'Code', class: 'cell-code' }, request.code ? [el('code', { text: request.code })] : []),
      el('td', { 'data-label': 'Latency', class: 'cell-number', text: latencyFormat.format(request.latencyMs) + ' ms' }),
      el('td', { 'data-label': 'Cache', text: request.cache || '' }),
      el('td', { 'data-label': 'Request id', class: 'cell-request-id' }, [el('code', { text: request.requestId })]),
    ]);
  }

  /** What the table holds, in words: for its caption and for the status line that announces it. */
  function describe(query) {
    const key = keys.find((k) => k.id === query.keyId);
    const name = '“' + (key ? key.name : query.keyId) + '”';
    const filters = [];
    if (query.status) filters.push(OUTCOMES[query.status]);
    if (query.requestId) filters.push('request id ' + query.requestId);
    return { name, filters: filters.length ? ' (' + filters.join(', ') + ')' : '' };
  }

  function render() {
    const { name, filters } = describe(shown);
    caption.textContent = 'Recent requests of ' + name + filters + ', newest first';
    wrap.hidden = shown.count === 0;
    more.parentElement.hidden = !shown.next;
    if (shown.count === 0) {
      statusLine.textContent = filters ? 'No requests of ' + name + ' match' + filters + '.' : name + ' made no requests in the last 24 hours.';
    } else {
      const count = countFormat.format(shown.count) + (shown.count === 1 ? ' request' : ' requests');
      statusLine.textContent = 'Showing ' + count + ' of ' + name + filters + ', newest first' + (shown.next ? '; more are available.' : '.');
    }
  }

  function setIdError(message) {
    portal.setFieldError(idInput, idError, message);
  }

  /** The cursor in a `Link: <…>; rel="next"` header, or null on the last page. */
  function nextCursor(headers) {
    const link = headers && headers.get('link');
    const match = link && /<([^>]*)>\s*;\s*rel="next"/.exec(link);
    return match ? new URL(match[1], window.location.href).searchParams.get('after') : null;
  }

  /** Loads the first page for the form's key and filters, or (`more`) the page after the rows shown. */
  async function load(moreOfShown) {
    const query = moreOfShown ? shown : { keyId: keySelect.value, status: statusSelect.value, requestId: idInput.value.trim() };
    if (!query || !query.keyId) return;
    let path = '/keys/' + encodeURIComponent(query.keyId) + '/requests?limit=' + PAGE_SIZE;
    if (query.status) path += '&status=' + encodeURIComponent(query.status);
    if (query.requestId) path += '&requestId=' + encodeURIComponent(query.requestId);
    if (moreOfShown) path += '&after=' + encodeURIComponent(shown.next);
    const mine = ++asked;
    const button = moreOfShown ? more : submit;
    portal.setBusy(button, true);
    const result = await portal.api('GET', path);
    portal.setBusy(button, false);
    if (mine !== asked) return;
    errorBox.hidden = true;
    if (!result.ok) {
      if (result.status === 401) return portal.goToLogin('/portal/keys');
      if (result.error.code === 'invalid_request' && /"requestId"/.test(result.error.message)) {
        setIdError('Enter a request id as a response carried it: up to 128 letters, digits, “.”, “_”, “:” or “-”.');
        idInput.focus();
        return;
      }
      errorBox.textContent = 'Could not load the requests: ' + result.error.message;
      errorBox.hidden = false;
      errorBox.focus();
      return;
    }
    setIdError('');
    const rows = result.data.map(row);
    if (moreOfShown) {
      tbody.append(...rows);
      shown = Object.assign({}, shown, { count: shown.count + rows.length, next: nextCursor(result.headers) });
    } else {
      tbody.replaceChildren(...rows);
      shown = Object.assign({}, query, { count: rows.length, next: nextCursor(result.headers) });
    }
    render();
    // After "Load more", the reader goes on from the first new row rather than from a button that may be gone.
    if (moreOfShown && rows.length) rows[0].querySelector('th').focus();
  }

  /** keys.js tells this panel each time it lists the keys: the key choice follows. */
  document.addEventListener('asg:keys-listed', function (event) {
    keys = event.detail || [];
    const selected = keySelect.value;
    keySelect.replaceChildren(...keys.map((key) => el('option', { value: key.id, text: keyLabel(key) })));
    if (keys.some((k) => k.id === selected)) keySelect.value = selected;
    form.hidden = keys.length === 0;
    empty.hidden = keys.length > 0;
  });

  /** Each key's row has a "Requests" button (keys.js builds it while this panel is on the page). */
  document.addEventListener('click', function (event) {
    const button = event.target instanceof Element && event.target.closest('button[data-show-requests]');
    if (!button) return;
    keySelect.value = button.dataset.showRequests;
    statusSelect.value = '';
    idInput.value = '';
    setIdError('');
    panel.scrollIntoView({ block: 'start' });
    title.focus();
    load(false);
  });

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    load(false);
  });
  keySelect.addEventListener('change', function () {
    load(false);
  });
  statusSelect.addEventListener('change', function () {
    load(false);
  });
  idInput.addEventListener('input', function () {
    if (idInput.getAttribute('aria-invalid') === 'true') setIdError('');
  });
  more.addEventListener('click', function () {
    if (shown && shown.next) load(true);
  });
})();
