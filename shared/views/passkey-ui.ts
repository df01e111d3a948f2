// The passkey ceremonies run in the browser: @simplewebauthn/browser's bundle, then the page code
// below, both served as one script of this host (GET /assets/passkeys.js, shared/pages/passkey-script.ts).
// The pages that use it (sign-in, second step, security page) name it in `page({ script })`, which
// allows scripts of this host only: no inline script, no eval. Without JavaScript or WebAuthn the
// passkey controls stay hidden and the pages work as before.

/** Where the pages load the passkey script from. */
export const PASSKEY_SCRIPT_PATH = '/assets/passkeys.js';

/**
 * The page code, plain ES2020 for any browser with WebAuthn. It finds its forms by id:
 * - `passkey-sign-in` (POST /login/passkey): its button asks for a passkey (modal); on a page whose
 *   form says `data-autofill="yes"`, the browser's autofill offers the user's passkeys on the e-mail
 *   field at once (conditional mediation). The answer goes into the form's `response` field, and the
 *   form is sent.
 * - `add-passkey` (POST /account/security/passkeys): sending it first creates the passkey, then
 *   sends the form with the answer.
 * Options come from the form's `data-options` URL (a POST with the page's CSRF field).
 */
export const PASSKEY_PAGE_CODE = `
(function () {
  'use strict';
  var W = globalThis.SimpleWebAuthnBrowser;
  if (!W || !W.browserSupportsWebAuthn()) return;
  function options(form, pageOnRefusal) {
    var body = new URLSearchParams({ csrf: form.elements.csrf.value });
    return fetch(form.dataset.options, { method: 'POST', body: body, credentials: 'same-origin' }).then(function (res) {
      // Sent to the sign-in form instead (a sign-in too old to add a passkey): the browser goes there, which says why.
      if (res.redirected && pageOnRefusal) {
        location.assign(res.url);
        return new Promise(function () {});
      }
      if (!res.ok) throw new Error('options ' + res.status);
      return res.json();
    });
  }
  function show(id, text) {
    var el = document.getElementById(id);
    if (!el) return;
    if (text) el.textContent = text;
    el.hidden = false;
  }
  function send(form, answer) {
    form.elements.response.value = JSON.stringify(answer);
    form.submit();
  }
  var signIn = document.getElementById('passkey-sign-in');
  if (signIn) {
    show('passkey-area');
    var run = function (autofill) {
      return options(signIn).then(function (optionsJSON) {
        return W.startAuthentication({ optionsJSON: optionsJSON, useBrowserAutofill: autofill });
      }).then(function (answer) { send(signIn, answer); }, function () {
        if (!autofill) show('passkey-error', 'No passkey was used. Try again, or use your password.');
      });
    };
    document.getElementById('passkey-button').addEventListener('click', function () { run(false); });
    if (signIn.dataset.autofill === 'yes') {
      W.browserSupportsWebAuthnAutofill().then(function (yes) { if (yes) run(true); });
    }
  }
  var add = document.getElementById('add-passkey');
  if (add) {
    add.addEventListener('submit', function (event) {
      event.preventDefault();
      options(add, true).then(function (optionsJSON) {
        return W.startRegistration({ optionsJSON: optionsJSON });
      }).then(function (answer) { send(add, answer); }, function () {
        show('add-passkey-error', 'No passkey was created. Try again.');
      });
    });
  }
})();
`;
