// coffer's screens work without this file: every action is a plain form
// that posts and redirects. With it, list filters apply without a reload
// and a transaction's category is changed in its row. It is wired by data-
// attributes alone, because the Content-Security-Policy runs no inline
// script.
(() => {
  'use strict';

  // announce has the page's status region read a sentence aloud.
  const announce = (text) => {
    const region = document.getElementById('announce');
    if (!region) return;
    // Emptied first, so that the same sentence twice is read twice.
    region.textContent = '';
    requestAnimationFrame(() => { region.textContent = text; });
  };

  // Filters without reload: <form data-live="ID"> is a GET form whose
  // results are the element #ID. A change fetches the same page with the
  // new query, puts its #ID in place and moves the address along, so that
  // reload, back and forward show the same list. The submit button still
  // works; any failure falls back to loading the page.
  const liveFilter = (form) => {
    let timer = 0, pending = null, lastTyped = null;

    const urlOf = () => {
      const q = new URLSearchParams();
      for (const [k, v] of new FormData(form)) {
        if (String(v).trim() !== '') q.append(k, v);
      }
      const s = q.toString();
      return form.action.split('?')[0] + (s ? '?' + s : '');
    };

    // copyFields brings each field's error message (and, after back or
    // forward, its value) from the page just fetched.
    const copyFields = (other, values) => {
      for (const el of form.elements) {
        const twin = el.id && other.querySelector('#' + CSS.escape(el.id));
        if (!twin || !el.name) continue;
        if (values) el.value = twin.value;
        const mine = el.parentNode.querySelector('.field-error');
        const theirs = twin.parentNode.querySelector('.field-error');
        if (mine) mine.remove();
        if (theirs) el.parentNode.appendChild(document.importNode(theirs, true));
      }
    };

    // load fetches url and shows its results; how is 'push' or 'replace'
    // for the history, '' when the address is already url (back, forward).
    const load = (url, how) => {
      if (pending) pending.abort();
      pending = new AbortController();
      const region = document.getElementById(form.dataset.live);
      if (region) region.setAttribute('aria-busy', 'true');
      fetch(url, { signal: pending.signal })
        .then((res) => {
          if (!res.ok) throw new Error('status ' + res.status);
          return res.text();
        })
        .then((html) => {
          const doc = new DOMParser().parseFromString(html, 'text/html');
          const fresh = doc.getElementById(form.dataset.live);
          const other = form.id && doc.getElementById(form.id);
          if (!region || !fresh || !other) throw new Error('not a results page');
          if (how === 'push') history.pushState(null, '', url);
          if (how === 'replace') history.replaceState(null, '', url);
          copyFields(other, how === '');
          const node = document.importNode(fresh, true);
          region.replaceWith(node);
          enhance(node);
          announce(node.dataset.summary || '');
        })
        .catch((err) => {
          if (err.name !== 'AbortError') location.assign(url);
        });
    };

    // go applies the form; typing into the same box again replaces the
    // history entry it made, so back skips the half-typed words.
    const go = (typed) => {
      const url = urlOf();
      if (url === location.href) return;
      load(url, typed && typed === lastTyped ? 'replace' : 'push');
      lastTyped = typed;
    };

    form.addEventListener('submit', (e) => {
      e.preventDefault();
      clearTimeout(timer);
      go(null);
    });
    form.addEventListener('input', (e) => {
      clearTimeout(timer);
      if (e.target.tagName === 'SELECT') return go(null);
      const el = e.target;
      timer = setTimeout(() => go(el), 350);
    });
    window.addEventListener('popstate', () => {
      if (location.pathname === new URL(form.action).pathname) load(location.href, '');
    });
  };

  // Inline edit: a cell with data-inline-edit="FIELD" gets a button that
  // turns it into a select of the choices in <template id=data-choices>.
  // Save posts FIELD to data-action with the version the row was drawn at
  // (data-updated), as the edit form does; the server answers with the
  // row as it now stands, or as it stands with the problem in the cell.
  const inlineEdit = (cell) => {
    if (cell.querySelector('button.inline-edit')) return;
    const problem = cell.querySelector('.field-error');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'link inline-edit';
    for (const n of [...cell.childNodes]) if (n !== problem) button.appendChild(n);
    const what = cell.dataset.label.toLowerCase();
    button.setAttribute('aria-label', `Change the ${what} of ${cell.dataset.name} (${button.textContent.trim()})`);
    cell.prepend(button);
    button.addEventListener('click', () => openEditor(cell, button, what));
  };

  const openEditor = (cell, button, what) => {
    const old = cell.querySelector('.field-error');
    if (old) old.remove();
    const box = document.createElement('span');
    box.className = 'inline-edit-box';
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', `Change the ${what}`);
    // No name and no <form>: the row sits inside the bulk form, which
    // must not send this select or be nested.
    const select = document.createElement('select');
    select.setAttribute('aria-label', `The ${what} of ${cell.dataset.name}`);
    select.append(document.getElementById(cell.dataset.choices).content.cloneNode(true));
    select.value = cell.dataset.value;
    const save = document.createElement('button');
    save.type = 'button';
    save.textContent = 'Save';
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'secondary';
    cancel.textContent = 'Cancel';
    box.append(select, save, cancel);
    button.hidden = true;
    cell.append(box);
    select.focus();

    const close = () => {
      box.remove();
      button.hidden = false;
      button.focus();
    };
    cancel.addEventListener('click', close);
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') close();
      if (e.key === 'Enter' && e.target === select) { e.preventDefault(); save.click(); }
    });
    save.addEventListener('click', () => {
      box.setAttribute('aria-busy', 'true');
      save.disabled = true;
      saveCell(cell, select.value).catch(() => {
        box.removeAttribute('aria-busy');
        save.disabled = false;
        let p = box.querySelector('.field-error');
        if (!p) {
          p = document.createElement('p');
          p.className = 'field-error';
          p.setAttribute('role', 'alert');
          box.append(p);
        }
        p.textContent = `The ${what} could not be saved. Reload the page and try again.`;
      });
    });
  };

  // saveCell posts the cell's new value and puts the row the server draws
  // in place of the old one; it rejects when there is no row to show.
  const saveCell = (cell, value) => {
    const token = document.querySelector('meta[name="csrf-token"]');
    const body = new URLSearchParams({
      csrf_token: token ? token.content : '',
      updated: cell.dataset.updated,
      return_to: location.pathname + location.search,
    });
    body.set(cell.dataset.inlineEdit, value);
    return fetch(cell.dataset.action, { method: 'POST', body, headers: { 'X-Requested-With': 'fetch' } })
      .then((res) => res.text().then((html) => {
        // 409 and 422 come with the row and the problem in it; anything
        // else (a redirect to sign in, a deleted row) has no row to show.
        if (res.redirected || ![200, 409, 422].includes(res.status)) throw new Error('status ' + res.status);
        const t = document.createElement('template');
        t.innerHTML = html.trim();
        const row = t.content.firstElementChild;
        const old = cell.closest('tr');
        if (!row || row.tagName !== 'TR' || row.id !== old.id) throw new Error('not a row');
        const tick = old.querySelector('input[name="ids"]'), newTick = row.querySelector('input[name="ids"]');
        if (tick && newTick) newTick.checked = tick.checked;
        old.replaceWith(row);
        enhance(row);
        const again = row.querySelector('button.inline-edit');
        if (again) again.focus();
        if (res.ok) announce('Saved.');
      }));
  };

  // Copy buttons: data-copy names the element whose text is copied. They
  // are hidden without this script, which is what makes them work.
  const copyButton = (button) => {
    button.hidden = false;
    button.addEventListener('click', () => {
      const src = document.getElementById(button.dataset.copy);
      if (src && navigator.clipboard) navigator.clipboard.writeText(src.textContent).then(() => announce('Copied.'));
    });
  };

  // enhance wires what arrives in root: the page, or a part put in place.
  const enhance = (root) => {
    root.querySelectorAll('[data-inline-edit]').forEach(inlineEdit);
    root.querySelectorAll('button[data-copy]').forEach(copyButton);
  };

  // A chat's answer as it is written: data-stream on the pending notice
  // names the chat's event stream. The text shows as it comes; the page
  // reloads once the answer is stored or has failed, or, should the
  // stream fail, after a few seconds, as the page without this script
  // does by itself.
  const chatStream = (notice) => {
    const later = () => setTimeout(() => location.reload(), 3000);
    if (!window.EventSource) { later(); return; }
    const text = document.createElement('div');
    text.className = 'content';
    text.style.whiteSpace = 'pre-wrap';
    notice.after(text);
    const src = new EventSource(notice.dataset.stream);
    const end = () => { src.close(); location.reload(); };
    src.addEventListener('delta', (e) => { text.textContent += JSON.parse(e.data).text || ''; });
    src.addEventListener('restart', () => { text.textContent = ''; });
    src.addEventListener('done', end);
    src.addEventListener('idle', end);
    // An "error" event ends the answer; a lost connection is an error
    // event too, without data: either way, load the page again.
    src.addEventListener('error', (e) => { src.close(); if (e.data) end(); else later(); });
  };

  // The reconciliation screen: as rows are ticked, the cleared balance and
  // the difference follow, before the ticks are saved. The figures' table
  // carries the statement and the saved cleared balance, and each box what
  // its row does to the balance, in ten-thousandths; saving still decides.
  const reconcileFigures = (figures) => {
    const form = document.getElementById('reconcile-rows');
    if (!form) return;
    const boxes = [...form.querySelectorAll('input[type=checkbox][data-effect]')];
    const saved = new Map(boxes.map((b) => [b, b.checked]));
    const fmt = new Intl.NumberFormat('en-US', { style: 'currency', currency: figures.dataset.currency });
    const show = (units) => fmt.format(units / 10000);
    const update = () => {
      let cleared = Number(figures.dataset.cleared);
      for (const b of boxes) {
        if (b.checked !== saved.get(b)) cleared += (b.checked ? 1 : -1) * Number(b.dataset.effect);
      }
      const diff = Number(figures.dataset.statement) - cleared;
      document.getElementById('cleared-balance').textContent = show(cleared);
      document.getElementById('difference').firstElementChild.textContent = show(diff);
      const status = document.getElementById('reconcile-status');
      if (status) {
        status.textContent = diff === 0 ? 'The difference is zero: you can finish.'
          : 'Difference ' + show(diff) + ': keep ticking the rows the statement shows.';
      }
    };
    form.addEventListener('change', update);
  };

  // Back and submit again must send the form's first one-time token (its
  // hidden csrf_token), so that the server knows the form was sent: a
  // browser that loads the page again on back gets new tokens, and
  // Chromium does not restore hidden fields. So a page keeps its tokens
  // in sessionStorage by address, and a page shown again by back or
  // forward takes those back; any other load keeps its new ones.
  const keepFormTokens = () => {
    const inputs = [...document.querySelectorAll('form input[name=csrf_token]')];
    if (!inputs.length) return;
    const nav = performance.getEntriesByType('navigation')[0];
    const key = 'coffer:form-tokens:' + location.pathname + location.search;
    try {
      const kept = JSON.parse(sessionStorage.getItem(key) || 'null');
      if (nav && nav.type === 'back_forward' && Array.isArray(kept) && kept.length === inputs.length) {
        inputs.forEach((input, n) => { input.value = kept[n]; });
      } else {
        sessionStorage.setItem(key, JSON.stringify(inputs.map((input) => input.value)));
      }
    } catch (e) {
      // No storage: each load keeps its own tokens.
    }
  };

  // Passkeys: <form data-passkey="create|get" data-passkey-options=JSON>
  // asks the browser for a new passkey or for a signature by one, puts
  // the answer (JSON, base64url, as the server's WebAuthn library reads
  // it) in the form's hidden field and sends the form.
  const passkeyForm = (form) => {
    const creating = form.dataset.passkey === 'create';
    const field = form.querySelector(creating ? 'input[name=credential]' : 'input[name=assertion]');
    const error = form.querySelector('[data-passkey-error]');
    const say = (text) => {
      if (error) { error.textContent = text; error.hidden = false; }
      announce(text);
    };
    form.addEventListener('submit', async (ev) => {
      if (field.value) return;
      ev.preventDefault();
      const PKC = window.PublicKeyCredential;
      if (!PKC || !PKC.parseCreationOptionsFromJSON || !navigator.credentials) {
        say('This browser cannot use passkeys.');
        return;
      }
      try {
        const options = JSON.parse(form.dataset.passkeyOptions).publicKey;
        const cred = creating
          ? await navigator.credentials.create({ publicKey: PKC.parseCreationOptionsFromJSON(options) })
          : await navigator.credentials.get({ publicKey: PKC.parseRequestOptionsFromJSON(options) });
        field.value = JSON.stringify(cred);
        form.submit();
      } catch (e) {
        say(e && e.name === 'NotAllowedError'
          ? 'The passkey was not used (cancelled or timed out). Try again.'
          : 'The passkey did not work: ' + (e && e.message ? e.message : e));
      }
    });
  };

  // A transfer between two currencies: <form data-fx-transfer> asks for
  // the received amount only when the chosen accounts' currencies differ,
  // and names each amount's currency. Without this the field is always
  // there, labelled for the To account's currency.
  const fxTransfer = (form) => {
    const from = form.querySelector('#from_account_id');
    const to = form.querySelector('#to_account_id');
    const box = form.querySelector('[data-fx-received]');
    if (!from || !to || !box) return;
    const currency = (sel) => (sel.selectedOptions[0] && sel.selectedOptions[0].dataset.currency) || '';
    const update = () => {
      const a = currency(from), b = currency(to);
      form.querySelector('[data-fx-from]').textContent = a ? ' in ' + a : '';
      form.querySelector('[data-fx-to]').textContent = b ? 'in ' + b : "in the To account's currency";
      box.hidden = a !== '' && b !== '' && a === b;
    };
    from.addEventListener('change', update);
    to.addEventListener('change', update);
    update();
  };

  keepFormTokens();
  document.querySelectorAll('form[data-passkey]').forEach(passkeyForm);
  document.querySelectorAll('form[data-fx-transfer]').forEach(fxTransfer);
  document.querySelectorAll('form[data-live]').forEach(liveFilter);
  document.querySelectorAll('[data-stream]').forEach(chatStream);
  document.querySelectorAll('#reconcile-figures').forEach(reconcileFigures);
  enhance(document);
})();
