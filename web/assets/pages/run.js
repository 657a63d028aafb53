// One run's full table: every variant at every point, with its median, CI,
// trials, correctness check and change against the run's baseline variant.
import * as api from '../api.js';
import {badge, commitLink, el, section, table} from '../dom.js';
import * as fmt from '../format.js';

export async function run(ctx) {
  const id = ctx.match[1];
  const doc = await api.get('/api/v1/runs/' + id, {}, ctx.signal);
  const r = doc.run;
  const points = new Map(doc.points.map((p) => [p.id, p]));
  const rows = doc.cells.map((c) => {
    const s = c.summary;
    const p = points.get(c.point_id);
    return [el('span', {text: c.variant}), el('span', {title: c.point_key, text: p ? p.label : c.point_key}),
      s ? fmt.value(s.median) : '–', s ? '[' + fmt.value(s.ci_low) + ', ' + fmt.value(s.ci_high) + ']' : '–',
      String(c.trials), c.check ? {node: badge(c.check.status)} : '–', fmt.percent(c.delta_vs_baseline)];
  });
  ctx.root.replaceChildren(
    el('h1', {}, 'Run #' + r.id + ' of ', commitLink(doc.commit.sha), ' ', el('span', {class: 'subject', text: doc.commit.subject})),
    el('p', {}, badge(r.status), ' ', r.kind, ' · ', el('span', {text: r.purpose}), ' · ', fmt.date(r.started_at), ' · ',
      fmt.seconds(r.wall_s), ' · ', String(r.trial_count) + ' trials',
      doc.testbed ? el('span', {class: 'muted', text: ' · ' + doc.testbed.name + ' (' + doc.testbed.device_name + ')'}) : null),
    r.message ? el('pre', {class: 'message-body', text: r.message}) : null,
    section('Table (' + fmt.metricUnit(doc.metric) + ')',
      table([['Variant', 'Point', 'Median', '95% CI', 'Trials', 'Check', 'vs baseline']], rows, {class: 'data'})),
    r.stderr_tail ? section('stderr (tail)', el('pre', {class: 'message-body', text: r.stderr_tail})) : null);
}
