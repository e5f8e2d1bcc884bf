// coffer's screens work without this file: every action is a plain form
// that posts and redirects. With it, list filters apply without a reload.
// It is wired by data- attributes alone, because the
// Content-Security-Policy runs no inline script.
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
    root.querySelectorAll('button[data-copy]').forEach(copyButton);
  };

  document.querySelectorAll('form[data-live]').forEach(liveFilter);
  enhance(document);
})();
