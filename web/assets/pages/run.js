// One run's full table: every variant at every point, with the median of the
// metric shown (the judged one unless the switch says otherwise), its CI,
// trials, the median of each other declared metric (columns and units from
// the run's manifest), the correctness check and the change against the
// run's baseline variant; beside it the sweep view of those changes.
import * as api from '../api.js';
import {chartWidth, drawSweep} from '../chart.js';
import {metricSwitch, metricTitle} from '../controls.js';
import {badge, commitLink, el, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

export async function run(ctx) {
  const id = ctx.match[1];
  const doc = await api.get('/api/v1/runs/' + id, {}, ctx.signal);
  const r = doc.run;
  ctx.setTitle('Run #' + r.id + ' of ' + doc.commit.short_sha.slice(0, 7));
  const points = new Map(doc.points.map((p) => [p.id, p]));
  const metrics = doc.metrics || [];
  // The run carries every metric's summary: the switch only picks a column.
  const asked = ctx.params.get('metric');
  const shown = metrics.find((m) => m.name === asked) || metrics.find((m) => m.judged) ||
    {name: doc.metric, unit: doc.metric, lower_is_better: doc.lower_is_better, judged: true};
  const others = metrics.filter((m) => m.name !== shown.name);
  const summaryOf = (c) => (shown.judged ? c.summary : c.metrics[shown.name]) || null;
  const deltaOf = (c) => (c.deltas_vs_baseline ? c.deltas_vs_baseline[shown.name] : shown.judged ? c.delta_vs_baseline : null);
  const rows = doc.cells.map((c) => {
    const s = summaryOf(c);
    const p = points.get(c.point_id);
    const more = others.map((m) => (c.metrics[m.name] ? fmt.value(c.metrics[m.name].median) : '–'));
    return [el('span', {text: c.variant}), el('span', {title: c.point_key, text: p ? p.label : c.point_key}),
      s ? fmt.value(s.median) : '–', s ? '[' + fmt.value(s.ci_low) + ', ' + fmt.value(s.ci_high) + ']' : '–',
      String(c.trials), ...more, c.check ? {node: badge(c.check.status)} : '–', fmt.percent(deltaOf(c))];
  });
  const header = ['Variant', 'Point', 'Median', '95% CI', 'Trials',
    ...others.map((m) => metricTitle(m)), 'Check', 'vs baseline'];

  // The sweep view: each non-baseline variant's change against the baseline.
  const baseline = doc.variants.find((v) => v.is_baseline);
  const candidates = doc.variants.filter((v) => !v.is_baseline).map((v) => v.name);
  const sweepRows = doc.points.map((p) => ({
    label: p.label || p.key,
    key: p.key,
    cells: doc.cells.filter((c) => c.point_id === p.id && c.variant !== (baseline && baseline.name))
      .map((c) => ({candidate: c.variant, delta_rel: deltaOf(c), verdict: null})),
  }));
  const sweepBox = el('div', {class: 'sweep-chart', id: 'sweep-chart'});
  const withSweep = baseline && candidates.length && doc.cells.length;

  show(ctx.root,
    el('h1', {}, 'Run #' + r.id + ' of ', commitLink(doc.commit.sha), ' ', el('span', {class: 'subject', text: doc.commit.subject})),
    el('p', {}, badge(r.status), ' ', r.kind, ' · ', el('span', {text: r.purpose}), ' · ', fmt.date(r.started_at), ' · ',
      fmt.seconds(r.wall_s), ' · ', String(r.trial_count) + ' trials',
      doc.testbed ? el('span', {class: 'muted', text: ' · ' + doc.testbed.name + ' (' + doc.testbed.device_name + ')'}) : null),
    r.message ? el('pre', {class: 'message-body', text: r.message}) : null,
    el('form', {class: 'pickers', id: 'compare-run-form', onsubmit: (e) => {
      e.preventDefault();
      window.location.hash = route('/compare-runs', {a: String(r.id), b: new FormData(e.target).get('b').trim()});
    }}, metricSwitch({metrics, metric: shown.name}, '/run/' + r.id, {}),
    el('label', {}, 'compare with run ', el('input', {name: 'b', size: 8, required: true, pattern: '[0-9]{1,19}'})),
    el('button', {type: 'submit', text: 'Compare'})),
    section('Table (' + metricTitle(shown) + (shown.judged ? ', the judged metric' : '') + ')',
      withSweep
        ? el('div', {class: 'side-by-side'}, table([header], rows, {class: 'data', id: 'run-table'}), sweepBox)
        : table([header], rows, {class: 'data', id: 'run-table'}),
      el('p', {class: 'muted', text: 'Median and 95% CI of the run\'s trials; vs baseline = median / the baseline variant\'s median at the same point in this run − 1.'})),
    r.stderr_tail ? section('stderr (tail)', el('pre', {class: 'message-body', text: r.stderr_tail})) : null);
  if (!withSweep) return;
  const u = drawSweep(sweepBox, {rows: sweepRows, candidates, baseline: baseline.name, lowerIsBetter: shown.lower_is_better,
    width: chartWidth(sweepBox, 640), height: 300});
  sweepBox.uplot = u;
  ctx.signal.addEventListener('abort', () => u.destroy());
}
