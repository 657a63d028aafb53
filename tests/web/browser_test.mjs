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
//   - browsing (browseChecks below): drag-to-zoom and hover on the history
//     chart, several series on one chart, the sweep charts, the metric
//     switch, two commits compared, the testbed picker and the "same commit
//     on every testbed" view, tab titles, no sideways scroll at 1400 px or
//     on a phone, dark mode.
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

// ---- Browsing: charts, metrics, comparisons, testbeds (issue 13 points 3-5, 7; issue 12 point 3) ----

// What uPlot shows of chart `id`: x and y ranges, its series, the slots visible.
async function chartState(page, id) {
  return page.evaluate((id) => {
    const u = document.getElementById(id).uplot;
    return {x: [u.scales.x.min, u.scales.x.max], y: [u.scales.y.min, u.scales.y.max],
      series: u.series.slice(1).map((s) => s.label), data: u.data.slice(1), visible: u.visibleSlots(),
      axis: u.axes[1].label};
  }, id);
}

// Client coordinates of slot i of chart `id` at value v (default: its first series' value).
async function spotOf(page, id, i, v) {
  return page.evaluate(([id, i, v]) => {
    const u = document.getElementById(id).uplot;
    const rect = u.over.getBoundingClientRect();
    const y = v ?? u.data[1][i];
    return {x: rect.left + u.valToPos(i, 'x'), y: rect.top + u.valToPos(y, 'y'), top: rect.top + 10};
  }, [id, i, v]);
}

async function noSidewaysScroll(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

async function browseChecks(page, base, info) {
  const measured = info.shas.filter((s) => s !== info.running_sha && s !== info.docs_sha);
  const regressionAt = measured.indexOf(info.regression_sha);
  const before = measured[regressionAt - 1];
  const historyOf = (extra) => '#/history?variant=' + info.baseline_variant + '&point=C1' + extra;

  // Zoom: drag across commits 0..3 (before the slowdown); x shows them only
  // and y fits them (the +12% step is off the chart); a double-click resets.
  await open(page, base, historyOf(''));
  check(/measured \(\d+ A\/A runs\)/.test(await page.textContent('#page')),
    'the band caption says where the band came from (the fixture\'s A/A runs)');
  const whole = await chartState(page, 'history-chart');
  const from = await spotOf(page, 'history-chart', 0), to = await spotOf(page, 'history-chart', 3);
  await page.mouse.move(from.x - 5, from.top);
  await page.mouse.down();
  await page.mouse.move(to.x + 5, from.top, {steps: 8});
  await page.mouse.up();
  const zoomed = await chartState(page, 'history-chart');
  check(zoomed.x[0] > -0.5 && zoomed.x[1] < 4 && zoomed.visible[0] === 0 && zoomed.visible[1] === 3,
    'dragging across four commits zooms x to them (' + zoomed.x.map((v) => v.toFixed(2)) + ')');
  check(zoomed.y[1] - zoomed.y[0] < 0.6 * (whole.y[1] - whole.y[0]),
    'and y fits what is visible (span ' + (zoomed.y[1] - zoomed.y[0]).toFixed(2) + ' of ' + (whole.y[1] - whole.y[0]).toFixed(2) + ')');
  check(page.url().includes('#/history'), 'a drag opens no commit');
  await page.mouse.dblclick(from.x, from.y);
  const reset = await chartState(page, 'history-chart');
  check(reset.x[0] === whole.x[0] && reset.x[1] === whole.x[1], 'a double-click shows every commit again');

  // Hover: the tooltip says the commit, its date, CI, the change and the flag.
  const spot = await spotOf(page, 'history-chart', regressionAt);
  await page.mouse.move(spot.x, spot.y);
  await page.waitForSelector('#history-chart .chart-tip:not([hidden])', {timeout: 5000});
  const tip = await page.textContent('#history-chart .chart-tip');
  check(tip.includes(info.regression_sha.slice(0, 10)) && tip.includes('committed') && tip.includes('UTC'),
    'hovering a point names its commit and date (' + tip.slice(0, 60) + '…)');
  check(/95% CI \[[\d.]+, [\d.]+\]/.test(tip), 'the tooltip gives the 95% CI');
  check(/vs previous commit \+1[0-4]\.\d%/.test(tip), 'the change to the previous commit (+12% planted)');
  check(tip.includes('flag: regression'), 'and the flag');
  await page.mouse.move(1, 1);

  // Several series: every point of a variant, relative to its first commit.
  await open(page, base, historyOf('&chart=points&scale=relative'));
  const points = await chartState(page, 'history-chart');
  check(points.series.length === info.point_keys.length && points.series.at(-1) === 'C96',
    'one line per sweep point (' + points.series.join(' ') + ')');
  check(points.data.every((d) => Math.abs(d[0] - 1) < 1e-9), 'each normalised to its first commit (1.0)');
  check(points.data.every((d) => d[regressionAt] > 1.07), 'every point shows the slowdown at its commit');
  await open(page, base, historyOf('&chart=variants'));
  const variants = await chartState(page, 'history-chart');
  check(variants.series.length === info.variants.length && variants.axis.includes('us'),
    'every variant at one point, in the unit (' + variants.series.join(' ') + ')');
  const multi = await spotOf(page, 'history-chart', regressionAt, variants.data[0][regressionAt]);
  await page.mouse.move(multi.x, multi.y);
  await page.waitForSelector('#history-chart .chart-tip:not([hidden])', {timeout: 5000});
  const multiTip = await page.textContent('#history-chart .chart-tip');
  check(info.variants.every((v) => multiTip.includes(v)) && multiTip.includes('regression'),
    'its tooltip gives every variant\'s value and flag');
  check((await page.title()).startsWith('History: every variant at C1'), 'the tab says what is shown (' + await page.title() + ')');

  // The metric switch: tokens/s, higher is better; kept in the URL from page to page.
  await open(page, base, historyOf(''));
  await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
  await page.selectOption('#metric-switch', 'tokens_per_s');
  await ready(page);
  check(page.url().includes('metric=tokens_per_s'), 'choosing tokens/s puts the metric in the URL');
  const tokens = await chartState(page, 'history-chart');
  check(tokens.axis.includes('tokens/s') && tokens.axis.includes('higher is better'),
    'the chart is in tokens/s, higher is better (' + tokens.axis + ')');
  check(tokens.data[0][regressionAt] < tokens.data[0][regressionAt - 1] * 0.93, 'and shows the slowdown as a drop');
  check(await page.locator('#metric-note').isVisible(), 'the page says tokens/s is not the judged metric');
  await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
  await page.click('header nav a[href^="#/ab"]');
  await ready(page);
  check(page.url().includes('metric=tokens_per_s'), 'the metric stays chosen on the next page');
  check((await page.locator('#ab-table thead').textContent()).length > 0 &&
    (await page.textContent('#page h2')).includes('tokens_per_s'), 'the A/B table is in tokens/s');
  const sweepTokens = await chartState(page, 'sweep-chart');
  const slowIndex = sweepTokens.series.indexOf('bt32_w8_s3');
  check(slowIndex >= 0 && sweepTokens.data[slowIndex].every((d) => d < 0), 'the slower candidate is below the baseline in tokens/s');
  await open(page, base, '#/run/' + info.ok_runs.at(-1) + '?metric=tokens_per_s');
  check((await page.textContent('#page')).includes('tokens_per_s (tokens/s, higher is better)'), 'the run page switches metric too');

  // Sweep view beside the A/B table, and on the commit and run pages.
  await open(page, base, '#/ab');
  const sweep = await chartState(page, 'sweep-chart');
  const candidates = info.variants.filter((v) => v !== info.baseline_variant);
  check(sweep.series.length === candidates.length && candidates.every((c) => sweep.series.includes(c)),
    'the sweep chart has a line per candidate (' + sweep.series.join(' ') + ')');
  check(sweep.data[sweep.series.indexOf('bt32_w8_s3')].every((d) => d > 3), 'bt32_w8_s3 is slower at every point (Δ% > 3)');
  const box = await page.evaluate(() => {
    const t = document.getElementById('ab-table').getBoundingClientRect();
    const c = document.getElementById('sweep-chart').getBoundingClientRect();
    return {tableRight: t.right, chartLeft: c.left, tableTop: t.top, chartBottom: c.bottom};
  });
  check(box.chartLeft >= box.tableRight - 1 && box.tableTop < box.chartBottom, 'the chart stands beside the table');
  const sweepSpot = await spotOf(page, 'sweep-chart', 2, sweep.data[0][2]);
  await page.mouse.move(sweepSpot.x, sweepSpot.y);
  await page.waitForSelector('#sweep-chart .chart-tip:not([hidden])', {timeout: 5000});
  check((await page.textContent('#sweep-chart .chart-tip')).startsWith('C48'), 'hovering the sweep chart names the point');
  await open(page, base, '#/commit/' + info.regression_sha);
  check((await chartState(page, 'sweep-chart')).series.length === candidates.length, 'the commit page has the sweep chart');
  check(!/\bnull\b/.test(await page.textContent('#page')), 'the commit page prints no literal null');
  check((await page.locator('#runs tbody td:last-child').allTextContents()).every((t) => t.includes('commit run')),
    'the runs table says what each run was for');
  await open(page, base, '#/run/' + info.ok_runs.at(-1));
  check((await chartState(page, 'sweep-chart')).series.length === candidates.length, 'the run page has it too');
  check(!/\bnull\b/.test(await page.textContent('#page')), 'the run page prints no literal null');
  await page.fill('#compare-run-form input[name=b]', String(info.ok_runs.at(-2)));
  await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
  await page.click('#compare-run-form button[type=submit]');
  await ready(page);
  check((await page.locator('#compare-runs-table tbody tr').count()) === 18 &&
    (await page.locator('#compare-runs-table td[class*="v-"]').count()) === 0,
    'two runs compared: every cell\'s change, and no verdict from one run a side');

  // Two commits compared: every cell with its delta, band and verdict; the range.
  await open(page, base, '#/commit/' + info.regression_sha);
  await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
  await page.click('#compare-previous');
  await ready(page);
  check(page.url().includes('#/compare?a=' + before) && page.url().includes('b=' + info.regression_sha),
    'the commit page links to its comparison with the previous commit');
  check((await page.locator('#compare-table td.v-regression').count()) === 18, 'every compared cell is a regression');
  const cellTitle = await page.locator('#compare-table td.v-regression').first().getAttribute('title');
  check(/as judged .*band ±3\.0%.*regression/.test(cellTitle), 'each says the band and test that judged it (' + cellTitle + ')');
  check((await page.locator('#range tbody tr').count()) === 1, 'the range between them is the one commit');
  await open(page, base, '#/compare?a=' + info.hostile_sha + '&b=' + info.revert_sha);
  check((await page.locator('#range tbody tr').count()) === 2 && (await page.locator('#range .badge.inherited').count()) === 1,
    'an inherited commit in between is listed and marked');
  check((await page.locator('#compare-table td.v-improvement').count()) >= 6, 'the revert is an improvement');
  check((await page.title()).startsWith('Compare '), 'the tab names the comparison');

  // The testbed picker, kept in the URL; the same commit on every testbed.
  await open(page, base, '#/commit/' + info.regression_sha);
  check(await page.locator('#testbed-select').isVisible(), 'the header has a testbed picker');
  check((await page.locator('#testbed-select option').count()) === 3, 'listing both testbeds');
  await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
  await page.selectOption('#testbed-select', String(info.testbeds[1]));
  await ready(page);
  check(page.url().includes('testbed=' + info.testbeds[1]), 'the choice is in the URL');
  check((await page.textContent('.commit-links')).includes('fixture-gpu'), 'the commit page reads that testbed');
  check((await page.locator('#change-table td.v-regression').count()) === 0, 'where the commit is no regression');
  await page.evaluate(() => document.getElementById('page').removeAttribute('data-ready'));
  await page.click('header nav a[href^="#/history"]');
  await ready(page);
  check(page.url().includes('testbed=' + info.testbeds[1]), 'and the choice follows to the next page');
  await open(page, base, '#/?testbed=' + info.testbeds[1]);
  check((await page.textContent('#page')).includes('No open alert group.'),
    'the overview on the second testbed has no open alert group');
  await open(page, base, '#/commit/' + info.regression_sha + '/testbeds');
  const summary = await page.locator('#testbed-summary tbody tr').allTextContents();
  check(summary.length === 2 && summary[0].includes('fixture-cpu') && summary[1].includes('fixture-gpu'),
    'the same commit on every testbed: a row per testbed');
  check((await page.locator('#testbed-summary tbody tr').first().locator('td').nth(2).textContent()) === '18' &&
    (await page.locator('#testbed-summary tbody tr').nth(1).locator('td').nth(2).textContent()) === '0',
    'a regression on fixture-cpu only (18 cells against 0)');
  check((await page.locator('.testbed-table').count()) === 2, 'with each testbed\'s table side by side');

  // Layout: no sideways scroll at 1400 px, no overflow on a phone; dark mode.
  const pages = ['#/', historyOf(''), historyOf('&chart=points'), '#/commit/' + info.regression_sha,
    '#/commit/' + info.regression_sha + '/testbeds', '#/ab', '#/compare?a=' + before + '&b=' + info.regression_sha,
    '#/experiments', '#/run/' + info.ok_runs.at(-1)];
  for (const [width, height] of [[1400, 900], [390, 844]]) {
    await page.setViewportSize({width, height});
    const over = [];
    for (const hash of pages) {
      await open(page, base, hash);
      const extra = await noSidewaysScroll(page);
      if (extra > 0) over.push(hash + ' (+' + extra + ' px)');
    }
    check(over.length === 0, 'no page scrolls sideways at ' + width + ' px (' + over.join(', ') + ')');
  }
  await page.setViewportSize({width: 1280, height: 900});
  await page.emulateMedia({colorScheme: 'dark'});
  await open(page, base, '#/commit/' + info.regression_sha);
  const colors = await page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
  check(colors[0] === 'rgb(11, 18, 32)' && colors[1] === 'rgb(226, 232, 240)', 'dark mode follows prefers-color-scheme (' + colors + ')');
  await page.emulateMedia({colorScheme: 'light'});
  check((await page.title()).includes(info.regression_sha.slice(0, 7)), 'the commit page\'s tab names the commit');
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

    await browseChecks(page, base, info);
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
