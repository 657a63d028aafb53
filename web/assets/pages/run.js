// One run's full table: every variant at every point, with the median of the
// judged metric, its CI, trials, the median of each other declared metric
// (columns and units from the run's manifest), the correctness check and the
// change against the run's baseline variant.
import * as api from '../api.js';
import {badge, commitLink, el, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

export async function run(ctx) {
  const id = ctx.match[1];
  const doc = await api.get('/api/v1/runs/' + id, {}, ctx.signal);
  const r = doc.run;
  const points = new Map(doc.points.map((p) => [p.id, p]));
  const metrics = doc.manifest.metrics || [];
  const judged = metrics.find((m) => m.name === doc.metric);
  const others = metrics.filter((m) => m.name !== doc.metric);
  const rows = doc.cells.map((c) => {
    const s = c.summary;
    const p = points.get(c.point_id);
    const more = others.map((m) => (c.metrics[m.name] ? fmt.value(c.metrics[m.name].median) : '–'));
    return [el('span', {text: c.variant}), el('span', {title: c.point_key, text: p ? p.label : c.point_key}),
      s ? fmt.value(s.median) : '–', s ? '[' + fmt.value(s.ci_low) + ', ' + fmt.value(s.ci_high) + ']' : '–',
      String(c.trials), ...more, c.check ? {node: badge(c.check.status)} : '–', fmt.percent(c.delta_vs_baseline)];
  });
  const direction = (m) => (m.lower_is_better ? 'lower is better' : 'higher is better');
  const header = ['Variant', 'Point', 'Median', '95% CI', 'Trials',
    ...others.map((m) => m.name + ' (' + fmt.metricUnit(m.name, m.unit) + ', ' + direction(m) + ')'), 'Check', 'vs baseline'];
  show(ctx.root,
    el('h1', {}, 'Run #' + r.id + ' of ', commitLink(doc.commit.sha), ' ', el('span', {class: 'subject', text: doc.commit.subject})),
    el('p', {}, badge(r.status), ' ', r.kind, ' · ', el('span', {text: r.purpose}), ' · ', fmt.date(r.started_at), ' · ',
      fmt.seconds(r.wall_s), ' · ', String(r.trial_count) + ' trials',
      doc.testbed ? el('span', {class: 'muted', text: ' · ' + doc.testbed.name + ' (' + doc.testbed.device_name + ')'}) : null),
    r.message ? el('pre', {class: 'message-body', text: r.message}) : null,
    section('Table (' + doc.metric + ', ' + fmt.metricUnit(doc.metric, judged && judged.unit) + ', ' +
        (doc.lower_is_better ? 'lower is better' : 'higher is better') + ')',
      table([header], rows, {class: 'data'})),
    r.stderr_tail ? section('stderr (tail)', el('pre', {class: 'message-body', text: r.stderr_tail})) : null);
}
