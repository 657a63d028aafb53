// Screenshots of every dashboard page -- desktop and phone width, light and
// dark -- over the web tests' fixture database (two testbeds), for the docs.
// scripts/screenshots.sh runs it; see docs/screenshots/README.md.
// Usage: node screenshots.mjs --perfwatch BIN --fixture BIN --chromium PATH --out DIR
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.resolve(here, '../web/package.json'));
const {chromium} = require('playwright-core');

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['perfwatch', 'fixture', 'chromium', 'out']) {
    if (!out[k]) throw new Error('missing --' + k + ' (usage: node screenshots.mjs --perfwatch BIN --fixture BIN --chromium PATH --out DIR)');
  }
  return out;
}

function serve(bin, db) {
  const child = spawn(bin, ['serve', '--db', db, '--port', '0', '--commit-url', 'https://example.invalid/mla-kernels/commit/{sha}'],
    {stdio: ['ignore', 'pipe', 'pipe']});
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

async function main() {
  const a = args();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'perfwatch-shots-'));
  const db = path.join(work, 'fixture.db');
  const info = JSON.parse(execFileSync(a.fixture, [db], {encoding: 'utf8'}));
  const server = serve(a.perfwatch, db);
  const base = await server.url;
  const measured = info.shas.filter((s) => s !== info.running_sha && s !== info.docs_sha);
  const before = measured[measured.indexOf(info.regression_sha) - 1];
  const pages = [
    ['overview', '#/'],
    ['history', '#/history?variant=' + info.baseline_variant + '&point=C48'],
    ['history-points', '#/history?variant=' + info.baseline_variant + '&point=C48&chart=points&scale=relative'],
    ['history-tokens', '#/history?variant=' + info.baseline_variant + '&point=C48&metric=tokens_per_s'],
    ['commit', '#/commit/' + info.regression_sha],
    ['commit-testbeds', '#/commit/' + info.regression_sha + '/testbeds'],
    ['ab', '#/ab'],
    ['compare', '#/compare?a=' + before + '&b=' + info.regression_sha],
    ['experiments', '#/experiments'],
    ['run', '#/run/' + info.ok_runs.at(-1)],
  ];
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'perfwatch-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: a.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--hide-scrollbars'],
  });
  fs.mkdirSync(a.out, {recursive: true});
  try {
    const page = context.pages()[0] || (await context.newPage());
    for (const [device, width, height] of [['desktop', 1400, 900], ['phone', 390, 844]]) {
      await page.setViewportSize({width, height});
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({colorScheme: scheme});
        for (const [name, hash] of pages) {
          await page.evaluate(() => document.getElementById('page')?.removeAttribute('data-ready')).catch(() => {});
          await page.goto(base + '/' + hash);
          await page.waitForSelector('#page[data-ready="1"]', {timeout: 15000});
          await page.waitForTimeout(150);  // the header's testbed picker
          const file = path.join(a.out, name + '-' + device + '-' + scheme + '.png');
          await page.screenshot({path: file, fullPage: false});
          console.log(file);
        }
      }
    }
  } finally {
    await context.close();
    fs.rmSync(profile, {recursive: true, force: true});
    server.child.kill('SIGTERM');
    fs.rmSync(work, {recursive: true, force: true});
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
