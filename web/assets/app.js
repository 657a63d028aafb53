// The dashboard: one page at a time, chosen by the URL's hash
// ("#/commit/<sha>", "#/history?variant=..&point=..", ...), so every view has
// a link and the server serves one HTML file.
import * as api from './api.js';
import {testbedTitle} from './controls.js';
import {currentParams, el, message, route, STICKY} from './dom.js';
import {overview} from './pages/overview.js';
import {history} from './pages/history.js';
import {commit} from './pages/commit.js';
import {testbeds} from './pages/testbeds.js';
import {ab} from './pages/ab.js';
import {compare, compareRuns} from './pages/compare.js';
import {experiments} from './pages/experiments.js';
import {run} from './pages/run.js';

// `title`: the tab's title until the page sets a better one.
const routes = [
  {pattern: /^\/$/, name: 'overview', title: 'Overview', page: overview},
  {pattern: /^\/history$/, name: 'history', title: 'History', page: history},
  {pattern: /^\/commit\/([0-9a-fA-F]{4,64})$/, name: 'commit', title: 'Commit', page: commit},
  {pattern: /^\/commit\/([0-9a-fA-F]{4,64})\/testbeds$/, name: 'testbeds', title: 'Commit on every testbed', page: testbeds},
  {pattern: /^\/ab$/, name: 'ab', title: 'A/B', page: ab},
  {pattern: /^\/compare$/, name: 'compare', title: 'Compare', page: compare},
  {pattern: /^\/compare-runs$/, name: 'compare-runs', title: 'Compare runs', page: compareRuns},
  {pattern: /^\/experiments$/, name: 'experiments', title: 'Negative results', page: experiments},
  {pattern: /^\/run\/(\d{1,19})$/, name: 'run', title: 'Run', page: run},
];

let current = null;  // the shown page's AbortController: stops its timers and fetches

export function setTitle(text) {
  document.title = text + ' · perfwatch';
}

// The header's testbed picker: every testbed that measured the repo; the
// choice is the URL's `testbed` (none: each page's default, the testbed of
// the newest run). Shown once there is more than one to choose from.
async function testbedPicker() {
  const box = document.getElementById('testbed-picker');
  if (!box || box.dataset.loaded) return;
  box.dataset.loaded = '1';
  let list;
  try {
    list = (await api.get('/api/v1/testbeds')).testbeds;
  } catch (e) {
    box.dataset.loaded = '';
    return;  // a database without a repo yet: no picker
  }
  const select = el('select', {name: 'testbed', id: 'testbed-select', 'aria-label': 'testbed', onchange: (e) => {
    const hash = window.location.hash.replace(/^#/, '') || '/';
    const [path] = hash.split('?', 1);
    const params = Object.fromEntries(currentParams());
    window.location.hash = route(path, {...params, testbed: e.target.value || null});
  }},
  el('option', {value: ''}, 'testbed: default (the newest run\'s)'),
  list.map((t) => el('option', {value: String(t.id)}, testbedTitle(t) + ' — ' + t.commits + ' commits')));
  box.replaceChildren(select);
  box.hidden = list.length < 2;
  syncHeader();
}

// The header follows the URL: the picker shows its testbed, the nav links
// keep the sticky choices.
function syncHeader() {
  const params = currentParams();
  const select = document.getElementById('testbed-select');
  if (select) select.value = params.get('testbed') || '';
  for (const a of document.querySelectorAll('header nav a')) {
    const base = a.dataset.path || a.getAttribute('href').replace(/^#/, '');
    a.dataset.path = base;
    const keep = {};
    for (const key of STICKY) if (params.get(key)) keep[key] = params.get(key);
    a.setAttribute('href', route(base, keep));
  }
}

async function show() {
  const hash = window.location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?', 2);
  const params = new URLSearchParams(query || '');
  const root = document.getElementById('page');
  if (current) current.abort();
  current = new AbortController();
  const ctx = {root, params, signal: current.signal, match: null, setTitle};

  const found = routes.find((r) => r.pattern.test(path));
  document.body.dataset.page = found ? found.name : 'none';
  syncHeader();
  for (const a of document.querySelectorAll('header nav a')) {
    const target = a.dataset.path;
    a.classList.toggle('current', target === path || (target === '/history' && path.startsWith('/history')));
  }
  setTitle(found ? found.title : 'No such page');
  root.removeAttribute('data-ready');
  root.replaceChildren(el('p', {class: 'loading', text: 'Loading…'}));
  if (!found) {
    root.replaceChildren(message('error', 'No such page: ' + path));
    return;
  }
  ctx.match = path.match(found.pattern);
  testbedPicker();
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
