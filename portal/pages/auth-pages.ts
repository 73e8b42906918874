import { html, type SafeHtml } from '../html';

export const PASSWORD_MIN_LENGTH = 10;

/** Where to go after signing in: only a path on this portal or the docs, never another site. */
export function safeNext(value: unknown, fallback = '/portal/keys'): string {
  if (typeof value !== 'string' || value.length > 200) return fallback;
  if (!/^\/(portal|docs)(\/[A-Za-z0-9._~!$&'()*+,;=:@%/?#-]*)?$/.test(value)) return fallback;
  if (value.startsWith('//') || value.includes('\\') || value.includes('/..')) return fallback;
  return value;
}

function field(o: {
  id: string;
  label: string;
  type: string;
  autocomplete: string;
  hint?: SafeHtml;
  extra?: SafeHtml;
  minlength?: number;
}): SafeHtml {
  const describedBy = [o.hint ? `${o.id}-hint` : '', `${o.id}-error`].filter(Boolean).join(' ');
  const password = o.type === 'password';
  return html`<div class="field" data-field="${o.id}">
      <label for="${o.id}">${o.label}</label>
      ${o.hint ? html`<p class="field-hint" id="${o.id}-hint">${o.hint}</p>` : ''}
      <p class="field-error" id="${o.id}-error" hidden></p>
      <div class="${password ? 'password-wrap' : 'input-wrap'}">
        <input id="${o.id}" name="${o.id}" type="${o.type}" autocomplete="${o.autocomplete}" required
          ${o.minlength ? html`minlength="${o.minlength}"` : ''} maxlength="${password ? 200 : 254}"
          ${o.type === 'email' ? html`inputmode="email" autocapitalize="none" spellcheck="false"` : ''}
          aria-describedby="${describedBy}">
        ${password ? html`<button type="button" class="reveal" data-reveal="${o.id}" aria-controls="${o.id}">Show<span class="visually-hidden"> password</span></button>` : ''}
      </div>
      ${o.extra ?? ''}
    </div>`;
}

function formShell(o: { id: string; title: string; intro: SafeHtml; fields: SafeHtml[]; submit: string; busy: string; after: SafeHtml; next: string }): SafeHtml {
  return html`<div class="auth-card">
  <h1 id="${o.id}-title">${o.title}</h1>
  ${o.intro}
  <noscript><p class="callout callout-warning">This form needs JavaScript. Please enable it, or use the <a href="/docs/portal/">portal API</a> directly.</p></noscript>
  <div class="form-error" id="${o.id}-error" role="alert" tabindex="-1" hidden></div>
  <form id="${o.id}" class="stack-form" data-auth-form="${o.id}" data-next="${o.next}" novalidate aria-labelledby="${o.id}-title">
    ${o.fields}
    <button type="submit" class="button button-primary button-block" data-busy-label="${o.busy}">${o.submit}</button>
  </form>
  ${o.after}
</div>`;
}

export function signupPage(o: { next: string }): SafeHtml {
  return formShell({
    id: 'signup',
    title: 'Create your developer account',
    intro: html`<p class="muted">An account lets you create API keys for production and staging.</p>`,
    fields: [
      field({ id: 'email', label: 'Email address', type: 'email', autocomplete: 'email' }),
      field({
        id: 'password',
        label: 'Password',
        type: 'password',
        autocomplete: 'new-password',
        minlength: PASSWORD_MIN_LENGTH,
        hint: html`At least ${PASSWORD_MIN_LENGTH} characters. A few random words make a strong password; very common passwords are refused.`,
      }),
    ],
    submit: 'Create account',
    busy: 'Creating account…',
    after: html`<p class="auth-switch">Already have an account? <a href="/portal/login${o.next === '/portal/keys' ? '' : `?next=${encodeURIComponent(o.next)}`}">Log in</a></p>`,
    next: o.next,
  });
}

export function loginPage(o: { next: string; signedOut: boolean }): SafeHtml {
  return formShell({
    id: 'login',
    title: 'Log in',
    intro: o.signedOut
      ? html`<p class="notice" role="status">You have been logged out.</p>`
      : html`<p class="muted">Log in to create and manage your API keys.</p>`,
    fields: [
      field({ id: 'email', label: 'Email address', type: 'email', autocomplete: 'username' }),
      field({ id: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' }),
    ],
    submit: 'Log in',
    busy: 'Logging in…',
    after: html`<p class="auth-switch">New here? <a href="/portal/signup${o.next === '/portal/keys' ? '' : `?next=${encodeURIComponent(o.next)}`}">Create an account</a></p>`,
    next: o.next,
  });
}
