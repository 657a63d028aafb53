// The dashboard: one page at a time, chosen by the URL's hash
// ("#/commit/<sha>", "#/history?variant=..&point=..", ...), so every view has
// a link and the server serves one HTML file.
import {el, message} from './dom.js';
import {overview} from './pages/overview.js';
import {history} from './pages/history.js';
import {commit} from './pages/commit.js';
import {ab} from './pages/ab.js';
import {experiments} from './pages/experiments.js';
import {run} from './pages/run.js';

const routes = [
  {pattern: /^\/$/, name: 'overview', page: overview},
  {pattern: /^\/history$/, name: 'history', page: history},
  {pattern: /^\/commit\/([0-9a-fA-F]{4,64})$/, name: 'commit', page: commit},
  {pattern: /^\/ab$/, name: 'ab', page: ab},
  {pattern: /^\/experiments$/, name: 'experiments', page: experiments},
  {pattern: /^\/run\/(\d{1,19})$/, name: 'run', page: run},
];

let current = null;  // the shown page's AbortController: stops its timers and fetches

async function show() {
  const hash = window.location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?', 2);
  const params = new URLSearchParams(query || '');
  const root = document.getElementById('page');
  if (current) current.abort();
  current = new AbortController();
  const ctx = {root, params, signal: current.signal, match: null};

  const found = routes.find((r) => r.pattern.test(path));
  document.body.dataset.page = found ? found.name : 'none';
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('current', a.getAttribute('href') === '#' + path || (path === '/' && a.getAttribute('href') === '#/'));
  }
  root.removeAttribute('data-ready');
  root.replaceChildren(el('p', {class: 'loading', text: 'Loading…'}));
  if (!found) {
    root.replaceChildren(message('error', 'No such page: ' + path));
    return;
  }
  ctx.match = path.match(found.pattern);
  try {
    await found.page(ctx);
    if (!ctx.signal.aborted) root.dataset.ready = '1';
  } catch (e) {
    if (ctx.signal.aborted || e.name === 'AbortError') return;
    root.replaceChildren(message('error', e.message || String(e)));
    root.dataset.ready = 'error';
  }
}

window.addEventListener('hashchange', show);
show();
