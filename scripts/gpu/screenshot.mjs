// A screenshot of the dashboard's history chart of a database (one brought
// back from the GPU machine, or any other): starts `perfwatch serve` on it
// (read-only, a free loopback port), opens #/history in Debian's chromium
// (headless, driven by playwright-core from web/node_modules, as
// tests/web/browser_test.mjs does), checks that the chart is drawn, and
// saves the page as a PNG.
//
// usage: node scripts/gpu/screenshot.mjs --perfwatch BIN --db DB --out PNG
//          [--variant V] [--point KEY] [--chromium PATH] [--width PX]
//   --variant  default: the baseline variant
//   --point    default: the point of that variant's largest flagged change
//              (a regression or an improvement), else the sweep's last point
//   --chromium default: /usr/bin/chromium
// Prints the variant, the point and what the chart holds; exits 1 when the
// chart is not drawn (no pixels, a script error), 2 on bad arguments.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.resolve(here, '../../web/package.json'));

function usage(message) {
  console.error('screenshot.mjs: ' + message);
  console.error('usage: node scripts/gpu/screenshot.mjs --perfwatch BIN --db DB --out PNG [--variant V] [--point KEY] [--chromium PATH] [--width PX]');
  process.exit(2);
}

function args() {
  const known = new Set(['perfwatch', 'db', 'out', 'variant', 'point', 'chromium', 'width']);
  const out = {chromium: '/usr/bin/chromium', width: '1280'};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!known.has(key) || argv[i + 1] === undefined) usage('unknown or incomplete option ' + argv[i]);
    out[key] = argv[i + 1];
  }
  for (const k of ['perfwatch', 'db', 'out']) if (!out[k]) usage('missing --' + k);
  if (!fs.existsSync(out.db)) usage(out.db + ': no such database');
  if (!fs.existsSync(out.chromium)) usage(out.chromium + ': no chromium there (apt-get install chromium, or --chromium PATH)');
  if (!/^\d+$/.test(out.width) || Number(out.width) < 640) usage('--width must be a number of pixels >= 640');
  return out;
}

// Starts `perfwatch serve` and resolves with its base URL once it listens.
function serve(bin, db) {
  const child = spawn(bin, ['serve', '--db', db, '--port', '0'], {stdio: ['ignore', 'pipe', 'pipe']});
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('perfwatch serve did not start: ' + stderr)), 20000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[0].replace(/\/$/, ''));
      }
    });
    child.on('exit', (code) => reject(new Error('perfwatch serve exited (' + code + '): ' + stderr)));
  });
  return {child, url};
}

async function getJson(base, route) {
  const r = await fetch(base + route);
  const body = await r.json();
  if (!r.ok) throw new Error(route + ': ' + r.status + ' ' + JSON.stringify(body));
  return body;
}

// The baseline variant, and the point where it changed most (by its flags).
async function choose(base, a) {
  const series = await getJson(base, '/api/v1/series');
  if (!series.variants.length || !series.points.length) throw new Error(a.db + ': nothing measured to chart');
  const variant = a.variant || (series.variants.find((v) => v.is_baseline) || series.variants[0]).name;
  if (!series.variants.some((v) => v.name === variant)) throw new Error('no variant ' + variant + ' in ' + a.db);
  let point = a.point;
  if (!point) {
    const flags = await getJson(base, '/api/v1/flags?state=any&variant=' + encodeURIComponent(variant) + '&limit=200');
    const changes = flags.flags.filter((f) => f.kind !== 'changepoint');
    changes.sort((x, y) => Math.abs(y.magnitude_rel) - Math.abs(x.magnitude_rel));
    point = changes.length ? changes[0].point_key : series.points[series.points.length - 1].key;
  }
  if (!series.points.some((p) => p.key === point)) throw new Error('no point ' + point + ' in ' + a.db);
  return {variant, point};
}

async function main() {
  const a = args();
  const {chromium} = require('playwright-core');
  const server = serve(a.perfwatch, a.db);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'perfwatch-screenshot-'));
  let context;
  try {
    const base = await server.url;
    const {variant, point} = await choose(base, a);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: a.chromium,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run'],
      viewport: {width: Number(a.width), height: 900},
      deviceScaleFactor: 1,
    });
    const page = context.pages()[0] || (await context.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(base + '/#/history?variant=' + encodeURIComponent(variant) + '&point=' + encodeURIComponent(point));
    await page.waitForSelector('#page[data-ready]', {timeout: 15000});
    if ((await page.getAttribute('#page', 'data-ready')) !== '1') throw new Error('the page failed: ' + (await page.textContent('#page')));
    await page.waitForSelector('#history-chart canvas', {timeout: 15000});
    const drawn = await page.evaluate(() => {
      const canvas = document.querySelector('#history-chart canvas');
      const {data} = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let painted = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) painted++;
      const u = document.getElementById('history-chart').uplot;
      return {painted, commits: u ? u.data[0].length : 0};
    });
    if (drawn.painted < 2000) throw new Error('the chart is empty (' + drawn.painted + ' painted pixels)');
    if (errors.length) throw new Error('the page reported errors: ' + JSON.stringify(errors));
    fs.mkdirSync(path.dirname(path.resolve(a.out)), {recursive: true});
    await page.locator('#page').screenshot({path: a.out});
    const flagged = await page.locator('#flagged tbody tr').count();
    console.log('screenshot.mjs: ' + a.out + ': history of ' + variant + ' at ' + point + ', ' + drawn.commits +
      ' commits charted, ' + flagged + ' flagged');
  } finally {
    if (context) await context.close();
    fs.rmSync(profile, {recursive: true, force: true});
    server.child.kill('SIGTERM');
  }
}

main().then(() => process.exit(0), (e) => {
  console.error('screenshot.mjs: ' + (e.stack || String(e)));
  process.exit(1);
});
