// Building the page safely. Every string goes into the DOM as a text node
// or an attribute set through the DOM API -- never as markup -- so a commit
// message like "<script>alert(1)</script>" is shown as those characters.

// el('a', {href: '#/x', class: 'k', title: t, onclick: f}, child, 'text', [more])
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = String(value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A page's content, replacing what was there. Children are as append()'s:
// a section left out (null, undefined, false) is skipped, where
// Element.replaceChildren would write it as the text "null".
export function show(root, ...children) {
  root.replaceChildren();
  return append(root, children);
}

// The choices a user makes once and keeps from page to page: they stay in
// every link the dashboard builds (so a link or a reload keeps them too).
export const STICKY = ['testbed', 'metric'];

export function currentParams() {
  const hash = window.location.hash.replace(/^#/, '');
  return new URLSearchParams(hash.split('?', 2)[1] || '');
}

// A link inside the dashboard: `route` is a path like "/commit/<sha>" and
// `params` an object of query values (arrays repeat the key). The sticky
// choices of the page shown are carried unless `params` names them (null
// drops one).
export function route(path, params = {}) {
  const query = new URLSearchParams();
  const here = currentParams();
  const all = {};
  for (const key of STICKY) if (here.get(key)) all[key] = here.get(key);
  Object.assign(all, params);
  for (const [key, value] of Object.entries(all)) {
    if (value === undefined || value === null || value === '') continue;
    for (const v of [value].flat()) query.append(key, String(v));
  }
  const q = query.toString();
  return '#' + path + (q ? '?' + q : '');
}

export function link(path, params, ...children) {
  return el('a', {href: route(path, params)}, ...children);
}

export function commitLink(sha, text) {
  return el('a', {href: route('/commit/' + encodeURIComponent(sha)), class: 'sha'}, text ?? sha.slice(0, 10));
}

// A table from a header row and body rows (arrays of cells: nodes, text, or
// {node, class, title} objects).
export function table(headers, rows, props = {}) {
  const cell = (tag, c) => {
    if (c && typeof c === 'object' && !(c instanceof Node) && !Array.isArray(c)) {
      return el(tag, {class: c.class, title: c.title, colspan: c.colspan, scope: c.scope}, c.node ?? c.text ?? '');
    }
    return el(tag, {}, c ?? '');
  };
  const head = headers.length ? el('thead', {}, headers.map((row) => el('tr', {}, row.map((h) => cell('th', h))))) : null;
  // A wide table scrolls inside its own box instead of widening the page.
  return el('div', {class: 'table-wrap'},
    el('table', props, head, el('tbody', {}, rows.map((r) => el('tr', {}, r.map((c) => cell('td', c)))))));
}

export function badge(word, extra = '') {
  return el('span', {class: ('badge ' + String(word).replace(/[^a-z_]/g, '') + ' ' + extra).trim()}, String(word).replace(/_/g, ' '));
}

export function section(title, ...children) {
  return el('section', {}, el('h2', {text: title}), ...children);
}

export function message(kind, text) {
  return el('p', {class: 'message ' + kind, role: kind === 'error' ? 'alert' : null}, text);
}
