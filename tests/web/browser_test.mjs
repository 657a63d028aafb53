// The dashboard in a real browser: Debian's chromium, headless, driven by
// playwright-core (from web/node_modules). Builds the fixture database,
// starts `perfwatch serve` on it (free port), then:
//   - the overview lists the commits, the hostile commit message is shown as
//     text (no alert dialog, no injected element);
//   - the history chart is drawn (uPlot canvas with pixels on it) and its
//     legend names the statistic (the geomean of run medians);
//   - clicking the flagged point opens that commit's page;
//   - the negative-results page searches experiments and shows the verdicts
//     with their evidence;
//   - the A/B page lays the variants across the sweep;
//   - alert groups (a server that accepts writes, over a fixture of its
//     own): the open groups are listed, a group is triaged with the token and
//     leaves the open list for the closed one.
// Usage: node browser_test.mjs --perfwatch BIN --fixture BIN --writable BIN --chromium PATH --work DIR
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.resolve(here, '../../web/package.json'));
const {chromium} = require('playwright-core');

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['perfwatch', 'fixture', 'writable', 'chromium', 'work']) if (!out[k]) throw new Error('missing --' + k);
  return out;
}

function check(condition, what) {
  if (!condition) throw new Error('FAILED: ' + what);
  console.log('ok - ' + what);
}

// Starts `perfwatch serve` (or `command` with `argv`) and resolves with its
// URL once it says it listens.
function serve(bin, db, argv = ['serve', '--db', db, '--port', '0']) {
  const child = spawn(bin, argv, {stdio: ['ignore', 'pipe', 'pipe']});
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

async function ready(page) {
  await page.waitForSelector('#page[data-ready]', {timeout: 15000});
  const state = await page.getAttribute('#page', 'data-ready');
  if (state !== '1') throw new Error('page failed: ' + (await page.textContent('#page')));
}

async function open(page, base, hash) {
  await page.evaluate(() => document.getElementById('page')?.removeAttribute('data-ready')).catch(() => {});
  await page.goto(base + '/' + hash);
  await ready(page);
}

async function main() {
  const a = args();
  fs.rmSync(a.work, {recursive: true, force: true});
  fs.mkdirSync(a.work, {recursive: true});
  const db = path.join(a.work, 'fixture.db');
  const info = JSON.parse(execFileSync(a.fixture, [db], {encoding: 'utf8'}));
  const server = serve(a.perfwatch, db);
  const base = await server.url;
  console.log('# serving at ' + base);

  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'perfwatch-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: a.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
    viewport: {width: 1280, height: 900},
  });
  const dialogs = [], pageErrors = [], consoleErrors = [];
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.on('dialog', async (d) => {
      dialogs.push(d.message());
      await d.dismiss();
    });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });

    // Overview: the commits, the running job, the hostile message as text.
    await open(page, base, '#/');
    const rows = await page.locator('#commits tbody tr').count();
    check(rows === info.shas.length, 'the overview lists the ' + info.shas.length + ' commits (' + rows + ')');
    const hostile = page.locator('#commits').getByText(info.hostile_subject, {exact: true});
    check(await hostile.isVisible(), 'the hostile commit subject is visible as literal text in the overview');
    check(await page.locator('#running').getByText('Measuring').isVisible(), 'the running job shows its progress');
    check((await page.locator('#running progress').count()) >= 1, 'the running job has a progress bar');
    check((await page.locator('#given-up tbody tr').count()) === 1, 'the job given up on is shown on the overview');
    check((await page.locator('#given-up a.sha').first().textContent()) === info.hostile_sha.slice(0, 10),
      'naming its commit');

    // History: the chart is drawn; the flagged commit is a click away.
    await open(page, base, '#/history?variant=' + info.baseline_variant + '&point=' + info.point_keys[0]);
    await page.waitForSelector('#history-chart canvas');
    const painted = await page.evaluate(() => {
      const canvas = document.querySelector('#history-chart canvas');
      const ctx = canvas.getContext('2d');
      const {data} = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) n++;
      return {n, width: canvas.width, height: canvas.height};
    });
    check(painted.width > 300 && painted.height > 200, 'the uPlot canvas has a size (' + painted.width + 'x' + painted.height + ')');
    check(painted.n > 2000, 'the uPlot canvas is not empty (' + painted.n + ' painted pixels)');
    // The line is named by its statistic, never "median".
    const legend = await page.locator('#history-chart .u-legend').textContent();
    check(legend.includes('geomean of run medians') && !/\bmedian\b/.test(legend.replace('run medians', '')),
      'the chart legend names the statistic (' + legend.trim().slice(0, 80) + ')');
    check((await page.textContent('#value-note')).includes('geometric mean of its run medians'),
      'the note under the chart says what the line is');
    const measured = info.shas.filter((s) => s !== info.running_sha);
    const index = measured.indexOf(info.regression_sha);
    const spot = await page.evaluate((i) => {
      const u = document.getElementById('history-chart').uplot;
      const rect = u.over.getBoundingClientRect();
      return {x: rect.left + u.valToPos(i, 'x'), y: rect.top + u.valToPos(u.data[1][i], 'y')};
    }, index);
    await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
    await page.mouse.move(spot.x, spot.y);
    await page.mouse.click(spot.x, spot.y);
    await page.waitForURL('**/#/commit/' + info.regression_sha, {timeout: 10000});
    await ready(page);
    check(true, 'clicking the flagged point opened its commit page');
    const subject = await page.textContent('#commit-subject');
    check(subject.includes('slower'), 'the commit page shows the flagged commit (' + subject + ')');
    check((await page.locator('#change-table td.v-regression').count()) === 18, 'its table colours the 18 regressed cells');
    check((await page.locator('#flags tbody tr').count()) === 18, 'its flags are listed');

    // The hostile commit's own page: subject and message are text.
    await open(page, base, '#/commit/' + info.hostile_sha);
    check((await page.textContent('#commit-subject')) === info.hostile_subject, 'the hostile subject is rendered as text');
    check((await page.locator('#commit-subject').isVisible()), 'and is visible');
    check((await page.textContent('#commit-message')).includes('<img src=x onerror=alert(2)>'), 'the hostile message body is rendered as text');
    check((await page.locator('#page img').count()) === 0, 'no element was injected by the message');
    check((await page.locator('#jobs .badge.gave_up').count()) === 1, 'its jobs list the one given up on');
    check((await page.locator('#jobs').getByText('perfwatch jobs requeue ' + info.hostile_sha.slice(0, 10)).count()) === 1,
      'with how to re-queue it (this server is read-only)');

    // Negative results: search by words and verdict through the form.
    await open(page, base, '#/experiments');
    await page.fill('#experiment-search input[name=q]', 'C64');
    await page.selectOption('#experiment-search select[name=verdict]', 'rejected');
    await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
    await page.click('#experiment-search button[type=submit]');
    await ready(page);
    const cards = page.locator('#experiments article');
    check((await cards.count()) === 1, 'searching "C64" among rejected experiments finds the num_stages=3 record');
    check((await cards.first().textContent()).includes('num_stages=3 REJECTED'), 'its conclusion is shown');
    check((await cards.first().locator('table.evidence tbody tr').count()) === info.point_keys.length, 'with its evidence, point by point');
    check((await cards.first().locator('.badge.rejected').count()) >= 1, 'and its verdict');

    await open(page, base, '#/experiments?param=num_warps%3D8&verdict=rejected');
    const warps = await page.locator('#experiments article').count();
    check(warps >= 1, 'searching num_warps=8 finds the rejected variant (' + warps + ' records)');

    await open(page, base, '#/experiments?source=trailer');
    check(await page.locator('#experiments').getByText('<img src=x onerror=alert(3)>', {exact: true}).isVisible(),
      'a hypothesis written as markup is shown as text');
    check((await page.locator('#experiments img').count()) === 0, 'and injects no element');

    // A/B: the sweep's points as rows, each candidate's delta beside the baseline.
    await open(page, base, '#/ab');
    const abRows = await page.locator('#ab-table tbody tr').allTextContents();
    check(abRows.length === info.point_keys.length && abRows[0].startsWith('C1') && abRows.at(-1).startsWith('C96'),
      'the A/B table has a row per sweep point, C1 to C96');
    check((await page.locator('#ab-table td.v-regression').count()) === info.point_keys.length,
      'the rejected candidate is red at every point');

    await triageBlock(page, a);
    await investigationsBlock(page, base, info);

    check(dialogs.length === 0, 'no dialog was opened (' + JSON.stringify(dialogs) + ')');
    check(pageErrors.length === 0, 'no script error (' + JSON.stringify(pageErrors) + ')');
    check(consoleErrors.length === 0, 'no console error, CSP violations included (' + JSON.stringify(consoleErrors) + ')');
  } finally {
    await context.close();
    fs.rmSync(profile, {recursive: true, force: true});
    server.child.kill('SIGTERM');
  }
  const code = await new Promise((resolve) => server.child.on('exit', (c) => resolve(c)));
  check(code === 0, 'perfwatch serve stopped cleanly on SIGTERM');
}

// ---------------------------------------------------------------------------
// Alert groups (issue 13, triage): a writable server over a fixture of its
// own, so the read-only checks above see the story unchanged.
async function triageBlock(page, a) {
  const db = path.join(a.work, 'triage.db');
  const info = JSON.parse(execFileSync(a.fixture, [db], {encoding: 'utf8'}));
  const token = 'browser-test-token';
  const server = serve(a.writable, db, [db, token]);
  try {
    const base = await server.url;
    await open(page, base, '#/');
    const groups = page.locator('#alert-groups tbody tr');
    const before = await groups.count();
    check(before >= 2, 'the overview lists the open alert groups (' + before + ')');
    const row = groups.filter({has: page.locator('a.sha', {hasText: info.regression_sha.slice(0, 10)})});
    check((await row.count()) === 1, 'the slowdown is one group, not a row per flag');
    const cells = await row.locator('td').allTextContents();
    check(cells[5] === '18', 'its summary counts its 18 cells (' + cells[5] + ')');
    const worst = parseFloat(cells[3].replace('+', ''));
    check(cells[3].startsWith('+') && worst > 8 && worst < 16, 'and shows its worst change, about +12% (' + cells[3] + ')');
    await row.locator('select[name=triage]').selectOption('invalid');
    await row.locator('input[name=reason]').fill('a noisy node <b>x</b>');
    await row.locator('input[name=token]').fill(token);
    await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
    await row.locator('button[type=submit]').click();
    await ready(page);
    const after = page.locator('#alert-groups tbody tr');
    check((await after.count()) === before - 1, 'triaged with the token, the group leaves the open list');
    check((await after.filter({has: page.locator('a.sha', {hasText: info.regression_sha.slice(0, 10)})}).count()) === 0,
      'the slowdown is no longer open');
    const closed = page.locator('#closed-groups tbody tr').filter({has: page.locator('a.sha', {hasText: info.regression_sha.slice(0, 10)})});
    check((await closed.count()) === 1, 'it is listed among the groups closed lately');
    check((await closed.textContent()).includes('a noisy node <b>x</b>'), 'with its reason, as text');
    const flags = await (await fetch(base + '/api/v1/flags?state=open&commit=' + info.regression_sha)).json();
    check(flags.flags.length === 0, 'each of its flags is acknowledged');
    const refused = await fetch(base + '/api/v1/alert-groups/' + info.revert_sha + '/triage', {
      method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({triage: 'ack', reason: 'x'})});
    check(refused.status === 401, 'a triage without the token is refused (' + refused.status + ')');
  } finally {
    server.child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------
// Experiments grouped by investigation (issue 13, triage): the variant A/B
// repeated on every commit is one row with its verdicts over time.
async function investigationsBlock(page, base, info) {
  await open(page, base, '#/experiments');
  const rows = page.locator('#investigations tbody tr');
  const n = await rows.count();
  const cards = (await (await fetch(base + '/api/v1/experiments?limit=100&evidence=false')).json()).experiments.length;
  check(n >= 2 && n < cards, 'the experiments are grouped into ' + n + ' investigations (' + cards + ' experiments)');
  const rejected = rows.filter({has: page.locator('a.step[href$="id=' + info.rejected_experiment + '"]')});
  check((await rejected.count()) === 1, 'the rejected variant\'s A/Bs on every commit are one investigation');
  check((await rejected.locator('td').nth(2).textContent()).trim() === 'rejected', 'its current verdict is rejected');
  const steps = await rejected.locator('a.step').count();
  check(steps >= 5, 'with the verdict of each commit that measured it (' + steps + ')');
  const doc = await (await fetch(base + '/api/v1/investigations')).json();
  const said = doc.investigations.flatMap((i) => i.history.map((h) => [h.verdict, h.shown_verdict]));
  check(said.every(([stored, shown]) => stored === shown || (stored === 'no_effect' && shown === 'undecided')),
    'a verdict is shown as stored, or as undecided instead of no effect');
}

main().then(() => {
  console.log('browser test passed');
  process.exit(0);
}, (e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
