// coffer's screens work without this file: every action is a plain form
// that posts and redirects. It is wired by data- attributes alone,
// because the Content-Security-Policy runs no inline script.
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

  enhance(document);
})();
