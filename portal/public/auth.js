/* global document, window -- browser script, loaded by the portal pages */
/* Sign-up and log-in forms: validate, call the portal API, show errors next to the field they concern. */
(function () {
  'use strict';
  const portal = window.AsgPortal;
  const form = document.querySelector('form[data-auth-form]');
  if (!form || !portal) return;
  // A session that lapsed ran no log out: whoever signs in next in this tab gets none of its keys.
  portal.forgetTabKeys();

  const kind = form.dataset.authForm; // "signup" or "login"
  const next = form.dataset.next || '/portal/keys';
  const summary = document.getElementById(kind + '-error');
  const submit = form.querySelector('button[type="submit"]');
  const inputs = { email: form.elements.namedItem('email'), password: form.elements.namedItem('password') };
  const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
  const MIN_PASSWORD = 10;

  function fieldError(name, message) {
    portal.setFieldError(inputs[name], document.getElementById(name + '-error'), message);
  }

  function formError(message, link) {
    summary.textContent = message;
    if (link) {
      summary.append(' ');
      const a = document.createElement('a');
      a.href = link.href;
      a.textContent = link.text;
      summary.append(a);
    }
    summary.hidden = false;
    summary.focus();
  }

  function clearErrors() {
    summary.hidden = true;
    summary.textContent = '';
    fieldError('email', '');
    fieldError('password', '');
  }

  /** Checks what can be checked here; the server checks everything again. */
  function validate() {
    const problems = [];
    const email = inputs.email.value.trim();
    if (!email) problems.push(['email', 'Enter your email address.']);
    else if (!EMAIL.test(email)) problems.push(['email', 'Enter an email address like name@example.com.']);
    const password = inputs.password.value;
    if (!password) problems.push(['password', kind === 'signup' ? 'Choose a password.' : 'Enter your password.']);
    else if (kind === 'signup' && password.length < MIN_PASSWORD) {
      problems.push(['password', 'Password must be at least ' + MIN_PASSWORD + ' characters long.']);
    }
    return problems;
  }

  function showProblems(problems) {
    for (const [name, message] of problems) fieldError(name, message);
    inputs[problems[0][0]].focus();
  }

  form.addEventListener('input', function (event) {
    const name = event.target && event.target.name;
    if (name && inputs[name] && inputs[name].getAttribute('aria-invalid') === 'true') fieldError(name, '');
  });

  form.addEventListener('submit', async function (event) {
    event.preventDefault();
    clearErrors();
    const problems = validate();
    if (problems.length) return showProblems(problems);

    portal.setBusy(submit, true);
    const result = await portal.api('POST', '/' + kind, { email: inputs.email.value.trim(), password: inputs.password.value });
    if (result.ok) {
      window.location.assign(next);
      return;
    }
    portal.setBusy(submit, false);
    const { code, message } = result.error;
    if (code === 'conflict') {
      fieldError('email', message);
      formError(message, { href: '/portal/login', text: 'Log in instead' });
    } else if (code === 'weak_password') {
      showProblems([['password', message]]);
    } else if (code === 'invalid_request' && /^email\b/.test(message)) {
      showProblems([['email', 'Enter a valid email address of at most 254 characters.']]);
    } else if (code === 'unauthorized') {
      inputs.password.value = '';
      formError('Email or password is incorrect. Check both and try again.');
    } else if (code === 'rate_limited') {
      formError(message + ' This protects your account from password guessing.');
    } else {
      formError(message);
    }
  });

  for (const button of form.querySelectorAll('button[data-reveal]')) {
    button.addEventListener('click', function () {
      const input = document.getElementById(button.dataset.reveal);
      const show = input.type === 'password';
      input.type = show ? 'text' : 'password';
      button.firstChild.textContent = show ? 'Hide' : 'Show';
      input.focus();
    });
  }
})();
