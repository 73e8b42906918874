/* global document, window -- browser script, loaded by the keys page */
/* The keys page's plan panel: the account's plan, its limits and this month's usage against its quota. */
(function () {
  'use strict';
  const portal = window.AsgPortal;
  if (!portal) return;

  /** From this share of the monthly quota on, the panel warns. */
  const WARN_FROM = 0.8;

  const $ = (selector) => document.querySelector(selector);
  const status = $('[data-plan-status]');
  const error = $('#plan-error');
  const details = $('[data-plan]');
  const summary = $('[data-plan-summary]');
  const meter = $('[data-usage-meter]');
  const text = $('[data-usage-text]');
  const bar = $('[data-usage-bar]');
  const renewal = $('[data-usage-renewal]');
  const warning = $('[data-usage-warning]');

  const count = new Intl.NumberFormat();
  const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 0 });
  // The quota counts calendar months in UTC: the day it renews is that day in UTC.
  const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeZone: 'UTC' });

  function render(usage) {
    const perMinute = count.format(usage.requestsPerMinute) + ' requests per minute in each environment, shared by all your keys';
    const perMonth = usage.requestsPerMonth === null ? '' : ', and ' + count.format(usage.requestsPerMonth) + ' requests per calendar month (UTC) in both together';
    summary.replaceChildren('Your account is on the ', portal.el('strong', { text: usage.plan }), ' plan: ' + perMinute + perMonth + '.');

    const used = usage.requestsThisMonth;
    const quota = usage.requestsPerMonth;
    const renews = day.format(new Date(usage.monthEndsAt));
    if (quota === null) {
      text.textContent = count.format(used) + ' requests this month (no monthly quota)';
      bar.hidden = true;
      renewal.textContent = 'The count starts again on ' + renews + '.';
      warning.hidden = true;
      meter.classList.remove('usage-meter-warning');
      return;
    }
    text.textContent = count.format(used) + ' of ' + count.format(quota) + ' requests this month';
    bar.max = quota;
    bar.value = Math.min(used, quota);
    bar.hidden = false;
    renewal.textContent = 'The quota renews on ' + renews + '.';
    const share = used / quota;
    const warn = share >= WARN_FROM;
    meter.classList.toggle('usage-meter-warning', warn);
    warning.hidden = !warn;
    if (warn) {
      warning.textContent =
        share >= 1
          ? 'You have used all of this month’s quota: the API answers 429 quota_exceeded until ' + renews + '.'
          : 'You have used ' + percent.format(Math.floor(share * 100) / 100) + ' of this month’s quota. Once it is used up, the API answers 429 quota_exceeded until ' + renews + '.';
      bar.setAttribute('aria-describedby', 'usage-warning');
    } else {
      bar.removeAttribute('aria-describedby');
    }
  }

  async function loadPlan() {
    const result = await portal.api('GET', '/plan');
    if (!result.ok) {
      status.textContent = '';
      // 401: keys.js sends the visitor to the login page.
      if (result.status !== 401) {
        error.textContent = 'Could not load your plan: ' + result.error.message;
        error.hidden = false;
      }
      return;
    }
    error.hidden = true;
    render(result.data);
    details.hidden = false;
    status.textContent = '';
  }

  loadPlan();
})();
