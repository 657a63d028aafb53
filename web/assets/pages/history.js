// History along the branch: one variant x point (band shaded, CI whiskers,
// flags marked), or several series on one chart -- every sweep point of a
// variant, or every variant at a point -- in the metric's unit or
// normalised to each series' first commit. Click a point to open its commit;
// drag to zoom, double-click to reset.
import * as api from '../api.js';
import {chartWidth, drawHistory, drawLines} from '../chart.js';
import {metricSwitch, notJudgedNote, shared} from '../controls.js';
import {badge, commitLink, el, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

const LIMITS = [50, 100, 200, 500, 1000];
const MODES = [['one', 'this variant at this point'], ['points', 'every point of this variant'], ['variants', 'every variant at this point']];
const SCALES = [['unit', 'in the unit'], ['relative', 'relative to the first commit']];

// Commits of several histories in branch order: each series is oldest first
// along the same first-parent line, so a commit missing from one series goes
// right after the commit that precedes it in another.
function mergeCommits(histories) {
  const order = [];
  const index = new Map();
  for (const h of histories) {
    let after = -1;
    for (const e of h.entries) {
      if (index.has(e.sha)) {
        after = index.get(e.sha);
        continue;
      }
      order.splice(after + 1, 0, e);
      after += 1;
      order.forEach((x, i) => index.set(x.sha, i));
    }
  }
  return order;
}

async function severalSeries(ctx, series, h, mode, scale, limit, testbed, metric) {
  const names = mode === 'points' ? series.points.map((p) => p.key) : series.variants.map((v) => v.name);
  const histories = await Promise.all(names.map((n) => api.get('/api/v1/history', {
    variant: mode === 'points' ? h.variant : n, point: mode === 'points' ? n : h.point.key, limit, testbed, metric,
  }, ctx.signal).catch(() => null)));
  const present = histories.map((x, i) => [x, i]).filter(([x]) => x && x.entries.length);
  const commits = mergeCommits(present.map(([x]) => x));
  const labelOf = (i) => (mode === 'points' ? series.points[i].label : series.variants[i].name);
  const lines = present.map(([x, i]) => {
    const bySha = new Map(x.entries.map((e) => [e.sha, e.geomean_of_run_medians]));
    const first = x.entries.find((e) => e.geomean_of_run_medians !== null);
    const ref = first ? first.geomean_of_run_medians : null;
    return {
      label: labelOf(i),
      values: commits.map((c) => {
        const v = bySha.get(c.sha);
        if (v === undefined || v === null) return null;
        return scale === 'relative' ? (ref ? v / ref : null) : v;
      }),
      flags: new Map(x.entries.filter((e) => e.flag).map((e) => [e.sha, e.flag])),
    };
  });
  return {commits, lines};
}

export async function history(ctx) {
  const {testbed, metric} = shared(ctx);
  const series = await api.get('/api/v1/series', {}, ctx.signal);
  if (!series.variants.length || !series.points.length) {
    show(ctx.root, el('h1', {text: 'History'}), message('info', 'Nothing has been measured yet.'));
    return;
  }
  const variant = ctx.params.get('variant') || series.variants[0].name;
  const point = ctx.params.get('point') || series.points[0].key;
  const limit = LIMITS.includes(Number(ctx.params.get('limit'))) ? Number(ctx.params.get('limit')) : 200;
  const mode = MODES.some(([m]) => m === ctx.params.get('chart')) ? ctx.params.get('chart') : 'one';
  const scale = ctx.params.get('scale') === 'relative' ? 'relative' : 'unit';
  const here = {variant, point, limit, chart: mode === 'one' ? null : mode, scale: scale === 'unit' ? null : scale};

  const go = (changes) => {
    window.location.hash = route('/history', {...here, ...changes});
  };
  const select = (name, options, current, onchange) =>
    el('label', {}, name + ' ',
      el('select', {name, onchange: (e) => onchange(e.target.value)},
        options.map(([value, text]) => el('option', {value, selected: String(value) === String(current)}, text))));
  const h = await api.get('/api/v1/history', {variant, point, limit, testbed, metric}, ctx.signal);
  // The point as the server resolved it (the URL may name it by label or by part of its axes).
  const pickers = el('form', {class: 'pickers', id: 'history-pickers', onsubmit: (e) => e.preventDefault()},
    select('variant', series.variants.map((v) => [v.name, v.name + (v.is_baseline ? ' (baseline)' : '')]), variant,
      (v) => go({variant: v})),
    select('point', series.points.map((p) => [p.key, p.label + ' — ' + p.key]), h.point.key, (p) => go({point: p})),
    select('commits', LIMITS.map((n) => [n, 'last ' + n]), limit, (n) => go({limit: n})),
    metricSwitch(h, '/history', here),
    select('chart', MODES, mode, (m) => go({chart: m === 'one' ? null : m})),
    mode === 'one' ? null : select('scale', SCALES, scale, (s) => go({scale: s === 'unit' ? null : s})));
  const chart = el('div', {class: 'history-chart', id: 'history-chart'});
  const unit = fmt.metricUnit(h.metric, h.unit);
  const open = (sha) => {
    window.location.hash = route('/commit/' + sha);
  };

  if (mode !== 'one') {
    const {commits, lines} = await severalSeries(ctx, series, h, mode, scale, limit, testbed, metric);
    const what = mode === 'points' ? 'every sweep point of ' + h.variant : 'every variant at ' + h.point.label;
    ctx.setTitle('History: ' + what);
    show(ctx.root,
      el('h1', {}, 'History of ', el('span', {text: what})),
      pickers,
      notJudgedNote(h, 'its values are computed from the runs, without a CI.'),
      commits.length ? chart : message('info', 'Nothing measured here on ' + h.branch + '.'),
      el('p', {class: 'muted', id: 'value-note', text: 'Each line: one ' + (mode === 'points' ? 'sweep point' : 'variant') +
        ', each commit\'s geometric mean of its run medians' +
        (scale === 'relative' ? ', divided by that line\'s first commit (1.0 = unchanged)' : ' in ' + unit) +
        ' (' + (h.lower_is_better ? 'lower' : 'higher') + ' is better). Hover for values, drag to zoom, double-click to reset, click to open a commit.'}));
    if (!commits.length) return;
    const u = drawLines(chart, {
      labels: commits.map((c) => c.short_sha.slice(0, 7)),
      xName: 'commit',
      series: lines,
      yLabel: scale === 'relative' ? h.metric + ' / first commit' : h.metric + ' (' + unit + ')',
      format: (v) => (v === null || v === undefined ? '–' : scale === 'relative' ? '×' + v.toFixed(3) : fmt.value(v) + ' ' + unit),
      tipHead: (i) => el('span', {}, el('span', {class: 'sha', text: commits[i].short_sha}), ' ',
        el('span', {text: commits[i].subject}), el('span', {class: 'muted', text: ' · ' + fmt.date(commits[i].committed_at)})),
      tipExtra: (i, s) => {
        const f = s.flags.get(commits[i].sha);
        return f ? ' — ' + f.kind + ' ' + fmt.percent(f.magnitude_rel) : '';
      },
      width: chartWidth(chart),
      height: 380,
      onPick: (i) => open(commits[i].sha),
    });
    chart.uplot = u;
    ctx.signal.addEventListener('abort', () => u.destroy());
    return;
  }

  const b = h.band;
  const bandText = 'Shaded: the noise band ' + fmt.band(b.band_rel) + ' around the previous commit — ' +
    // k_runs counts A/A runs only: a band measured from unchanged history says where it came from instead.
    (b.calibrated ? 'measured (' + (b.source === 'aa' ? b.k_runs + ' A/A runs' : 'unchanged history') + '): ' + b.method
      : h.metric !== h.judged_metric ? 'the manifest\'s default: judging measures the band of ' + h.judged_metric + ' only'
        : 'not calibrated yet: the manifest\'s default');
  const flagged = h.entries.filter((e) => e.flag);
  ctx.setTitle('History: ' + h.variant + ' at ' + h.point.label);
  show(ctx.root,
    el('h1', {}, 'History of ', el('span', {text: h.variant}), ' at ', el('span', {text: h.point.label}),
      el('span', {class: 'muted', text: ' (' + h.point.key + ')'})),
    pickers,
    notJudgedNote(h, 'its values are computed from the runs, without a CI, and flags shown are those of the judged metric.'),
    h.entries.length ? chart : message('info', 'No measurement of this variant at this point on ' + h.branch + '.'),
    el('p', {class: 'muted', id: 'band-note', text: bandText}),
    el('p', {class: 'muted', id: 'value-note', text: 'Line: each commit\'s geometric mean of its run medians (each run\'s value is the median of its trials) — the statistic commits are compared by. Whiskers: its 95% CI over the runs. Triangles: flags (red regression, green improvement, orange drift, grey acknowledged or withdrawn). Hover for the date, CI and change; click a point to open its commit; drag to zoom, double-click to reset.'}),
    section('Flagged commits in this history',
      flagged.length
        ? table([['Commit', 'Subject', 'Flag', 'Change']], flagged.slice().reverse().map((e) => [
          commitLink(e.sha), el('span', {class: 'subject', text: e.subject}),
          {node: [badge(e.flag.kind), e.flag.acknowledged ? ' acknowledged' : '']},
          {node: fmt.percent(e.flag.magnitude_rel), class: fmt.verdictClass(e.flag.kind)}]), {class: 'data', id: 'flagged'})
        : message('ok', 'No flag here.')));
  if (!h.entries.length) return;
  const u = drawHistory(chart, h, {width: chartWidth(chart), height: 360, onPick: (entry) => open(entry.sha)});
  chart.uplot = u;  // for the browser test: it clicks a flagged point through the chart's own coordinates
  ctx.signal.addEventListener('abort', () => u.destroy());
}
