/* global DOMParser, Element, document, fetch, history, window -- browser script, loaded by the keys page */
/*
 * The keys page's usage section is server-rendered (chart, summary, table twin) and works without
 * this script: its links load the page for another key. Here they swap the section in place
 * instead, so the rest of the page (a new key's secret, shown once) is not lost.
 */
(function () {
  'use strict';
  const PANEL = '[data-usage-panel]';

  /** Loads `url` (a keys page) and puts its usage section in place of ours; false when it cannot. */
  async function showUsage(url, push) {
    const current = document.querySelector(PANEL);
    if (!current) return false;
    let res;
    try {
      res = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
    } catch {
      return false;
    }
    // A redirect means the session ended (to the login page): let the browser follow it.
    if (!res.ok || res.redirected) return false;
    const next = new DOMParser().parseFromString(await res.text(), 'text/html').querySelector(PANEL);
    if (!next) return false;
    current.replaceWith(document.adoptNode(next));
    if (push) history.pushState({ usage: true }, '', url);
    const title = document.getElementById('usage-title');
    if (title) {
      title.scrollIntoView({ block: 'start' });
      title.focus({ preventScroll: true });
    }
    return true;
  }

  document.addEventListener('click', async function (event) {
    const link = event.target instanceof Element && event.target.closest('a[data-usage-link]');
    // A new tab or window (modifier keys, middle button) is the browser's business.
    if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (!(await showUsage(link.href, true))) window.location.assign(link.href);
  });

  window.addEventListener('popstate', async function () {
    if (!(await showUsage(window.location.href, false))) window.location.reload();
  });
})();
