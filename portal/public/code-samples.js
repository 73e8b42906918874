/* global document, sessionStorage, window -- browser script, loaded by the landing and docs pages */
/*
 * The same call in curl, JavaScript (fetch) and Python (requests), in tabs with a copy button
 * each. With the key "Use in API explorer" handed to this tab, the samples carry it; without,
 * they read it from the ASG_KEY environment variable. The key lives in this tab's
 * sessionStorage only (gone when the tab closes, on log out, and on the login page), never in a
 * URL, and "Forget" removes it.
 */
(function () {
  'use strict';

  /** Written by docs-explorer.js when it takes the keys page's hand-off; read here in the same tab. */
  const TAB_KEY = 'asg:tab-key';
  const KEY_SHAPE = /^asg_(prod|stag)_[A-Za-z0-9_-]{43}$/;
  const LANGUAGES = [
    { id: 'curl', label: 'curl' },
    { id: 'js', label: 'JavaScript' },
    { id: 'python', label: 'Python' },
  ];

  /** The key this tab was handed, or null. */
  function tabKey() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(TAB_KEY) || 'null');
      return saved && typeof saved.key === 'string' && KEY_SHAPE.test(saved.key) ? saved : null;
    } catch {
      return null;
    }
  }

  function rememberKey(handoff) {
    sessionStorage.setItem(TAB_KEY, JSON.stringify({ key: handoff.key, environment: handoff.environment, name: handoff.name, prefix: handoff.prefix }));
  }

  function forgetKey() {
    sessionStorage.removeItem(TAB_KEY);
  }

  /** A POSIX shell word in single quotes: nothing inside is expanded. */
  const shellQuote = (text) => "'" + String(text).replace(/'/g, "'\\''") + "'";

  /** A JSON value as a Python literal (JSON's string escapes are Python's too). */
  function pythonLiteral(value, indent) {
    const pad = '    '.repeat(indent + 1);
    const end = '    '.repeat(indent);
    if (value === null) return 'None';
    if (value === true) return 'True';
    if (value === false) return 'False';
    if (Array.isArray(value)) return value.length ? '[\n' + value.map((v) => pad + pythonLiteral(v, indent + 1)).join(',\n') + ',\n' + end + ']' : '[]';
    if (typeof value === 'object') {
      const entries = Object.entries(value);
      return entries.length ? '{\n' + entries.map(([k, v]) => pad + JSON.stringify(k) + ': ' + pythonLiteral(v, indent + 1)).join(',\n') + ',\n' + end + '}' : '{}';
    }
    return JSON.stringify(value);
  }

  /**
   * The three samples of one call: `method`, absolute `url`, optional JSON `body` (a value), and
   * the `key` (null: read from ASG_KEY).
   */
  function samples(call) {
    const method = call.method.toUpperCase();
    const hasBody = call.body !== undefined && call.body !== null;
    const json = hasBody ? JSON.stringify(call.body) : null;

    const curl = ['curl' + (method === 'GET' ? '' : ' -X ' + method) + ' ' + shellQuote(call.url)];
    curl.push(call.key ? '-H ' + shellQuote('Authorization: Bearer ' + call.key) : '-H "Authorization: Bearer $ASG_KEY"');
    if (hasBody) curl.push("-H 'Content-Type: application/json'", '-d ' + shellQuote(json));

    const auth = call.key ? JSON.stringify('Bearer ' + call.key) : '`Bearer ${process.env.ASG_KEY}`';
    const js = [
      'const response = await fetch(' + JSON.stringify(call.url) + ', {',
      '  method: ' + JSON.stringify(method) + ',',
      '  headers: {',
      '    Authorization: ' + auth + ',',
      ...(hasBody ? ["    'Content-Type': 'application/json',"] : []),
      '  },',
      ...(hasBody ? ['  body: JSON.stringify(' + JSON.stringify(call.body, null, 2).replace(/\n/g, '\n  ') + '),'] : []),
      '});',
      'console.log(response.status, await response.json());',
    ];

    const python = ['import requests'];
    if (!call.key) python.push('import os');
    python.push(
      '',
      'response = requests.' + method.toLowerCase() + '(',
      '    ' + JSON.stringify(call.url) + ',',
      '    headers={"Authorization": ' + (call.key ? JSON.stringify('Bearer ' + call.key) : 'f"Bearer {os.environ[\'ASG_KEY\']}"') + '},',
      ...(hasBody ? ['    json=' + pythonLiteral(call.body, 1) + ','] : []),
      ')',
      'print(response.status_code, response.json())',
    );
    return { curl: curl.join(' \\\n     '), js: js.join('\n'), python: python.join('\n') };
  }

  let counter = 0;

  /** Fills `container` with the tabs of one call; returns a function that redraws them (a new key, a new server). */
  function render(container, call) {
    const el = window.AsgPortal.el;
    const id = 'samples-' + ++counter;
    const tablist = el('div', { role: 'tablist', 'aria-label': call.label || 'Code sample language', class: 'sample-tabs' });
    const panels = [];
    const tabs = LANGUAGES.map((language, index) => {
      const panelId = id + '-' + language.id;
      const tab = el('button', {
        type: 'button',
        id: panelId + '-tab',
        class: 'sample-tab',
        text: language.label,
        role: 'tab',
        'aria-controls': panelId,
        'aria-selected': String(index === 0),
        tabindex: index === 0 ? '0' : '-1',
      });
      const pre = el('pre', { id: panelId + '-code', tabindex: '0', 'aria-label': language.label + ' sample', 'data-language': language.id });
      const copy = el('button', { type: 'button', class: 'copy-button', 'data-copy': pre.id, text: 'Copy', 'aria-label': 'Copy the ' + language.label + ' sample' });
      const panel = el('div', { id: panelId, class: 'sample-panel', role: 'tabpanel', 'aria-labelledby': tab.id }, [copy, pre]);
      panel.hidden = index !== 0;
      panels.push(panel);
      return tab;
    });
    tablist.append(...tabs);

    const select = (index) => {
      tabs.forEach((tab, i) => {
        tab.setAttribute('aria-selected', String(i === index));
        tab.tabIndex = i === index ? 0 : -1;
        panels[i].hidden = i !== index;
      });
      tabs[index].focus();
    };
    tablist.addEventListener('click', (event) => {
      const index = tabs.indexOf(event.target.closest('[role="tab"]'));
      if (index >= 0) select(index);
    });
    // The tabs pattern: arrows move between tabs, Home and End go to the ends.
    tablist.addEventListener('keydown', (event) => {
      const current = tabs.indexOf(document.activeElement);
      if (current < 0) return;
      const next = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: tabs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      select((next + tabs.length) % tabs.length);
    });

    const draw = (update) => {
      Object.assign(call, update || {});
      const text = samples(call);
      panels.forEach((panel) => {
        const pre = panel.querySelector('pre');
        pre.textContent = text[pre.dataset.language];
      });
    };
    container.replaceChildren(tablist, ...panels);
    draw();
    return draw;
  }

  /**
   * Server-rendered frames (`data-code-samples`) on portal pages: the call is in data attributes,
   * with each environment's base URL; a handed-over key picks its own environment's.
   */
  function enhancePage() {
    const saved = tabKey();
    const environment = saved && saved.environment === 'staging' ? 'staging' : 'production';
    const base = (frame) => (environment === 'staging' ? frame.dataset.baseStaging : frame.dataset.baseProduction);
    const draws = [];
    for (const frame of document.querySelectorAll('[data-code-samples]')) {
      const body = frame.dataset.body ? JSON.parse(frame.dataset.body) : undefined;
      const call = { method: frame.dataset.method, url: base(frame) + frame.dataset.path, body, key: saved ? saved.key : null, label: frame.dataset.label };
      const draw = render(frame.querySelector('[data-samples-body]'), call);
      draws.push(() => draw({ key: null, url: frame.dataset.baseProduction + frame.dataset.path }));
    }
    const note = document.querySelector('[data-tab-key-note]');
    if (!note || !saved || draws.length === 0) return;
    note.hidden = false;
    note.querySelector('[data-tab-key-name]').textContent = '“' + (saved.name || 'your key') + '” (' + (saved.prefix || '') + '…)';
    note.querySelector('button[data-forget-key]').addEventListener('click', () => {
      forgetKey();
      draws.forEach((forget) => forget());
      note.hidden = true;
      window.AsgPortal.announce('The key is forgotten in this tab; the samples read ASG_KEY again.');
    });
  }

  window.AsgCodeSamples = { render, rememberKey };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', enhancePage);
  else enhancePage();
})();
