// A/B: one commit's variants side by side across the sweep, the way the
// users lay out their tables: per point (C1, C8, ... C96) the baseline, each
// candidate and its delta, coloured by the experiment's verdict at that point.
import * as api from '../api.js';
import {chartWidth, drawSweep} from '../chart.js';
import {metricSwitch, notJudgedNote, shared} from '../controls.js';
import {badge, commitLink, el, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

export async function ab(ctx) {
  const commit = ctx.params.get('commit') || undefined;
  const {testbed, metric} = shared(ctx);
  const doc = await api.get('/api/v1/ab', {commit, testbed, metric}, ctx.signal);
  ctx.setTitle('A/B at ' + doc.commit.short_sha.slice(0, 7));
  const form = el('form', {class: 'pickers', onsubmit: (e) => {
    e.preventDefault();
    const v = new FormData(e.target).get('commit').trim();
    window.location.hash = route('/ab', {commit: v});
  }}, el('label', {}, 'commit ', el('input', {name: 'commit', value: doc.commit.sha.slice(0, 12), size: 14, pattern: '[0-9a-fA-F]{4,64}'})),
  ' ', el('button', {type: 'submit', text: 'Show'}), ' ', metricSwitch(doc, '/ab', {commit}));

  const unit = fmt.metricUnit(doc.metric, doc.unit) + (doc.lower_is_better ? ', lower is better' : ', higher is better');
  const header1 = [{text: 'Point', scope: 'col'}, {text: 'baseline', scope: 'col'}];
  const header2 = [{text: ''}, {text: doc.baseline.name}];
  for (const c of doc.candidates) {
    header1.push({node: el('span', {}, el('span', {text: c.name}), ' ', c.experiment ? badge(c.experiment.verdict) : null), colspan: 2, scope: 'colgroup'});
    header2.push({text: 'candidate'}, {text: 'Δ%'});
  }
  const rows = doc.rows.map((r) => {
    const out = [{node: el('span', {title: r.point.key, text: r.point.label})}, fmt.value(r.baseline ? r.baseline.geomean_of_run_medians : null)];
    for (const cell of r.cells) {
      const title = cell.from === 'experiment'
        ? 'paired over ' + cell.runs + ' runs: p = ' + fmt.pValue(cell.p_value) + ' — ' + cell.verdict.replace('_', ' ') + '; ' + fmt.judgedBy(cell.judged_by)
        : 'ratio of the geomeans of run medians; no verdict';
      out.push(fmt.value(cell.value ? cell.value.geomean_of_run_medians : null),
        {node: fmt.percent(cell.delta_rel), class: 'cell ' + fmt.verdictClass(cell.verdict), title});
    }
    return out;
  });
  const hypotheses = doc.candidates.filter((c) => c.experiment).map((c) => el('li', {},
    el('strong', {text: c.name}), ' ', el('code', {text: JSON.stringify(c.params)}), ': ',
    el('span', {text: c.experiment.hypothesis}), c.experiment.conclusion ? el('em', {text: ' — ' + c.experiment.conclusion}) : null,
    ' ', el('a', {href: route('/experiments', {id: c.experiment.id}), text: 'evidence'})));

  const sweepBox = el('div', {class: 'sweep-chart', id: 'sweep-chart'});
  show(ctx.root,
    el('h1', {}, 'A/B at ', commitLink(doc.commit.sha), ' ', el('span', {class: 'subject', text: doc.commit.subject})),
    form,
    notJudgedNote(doc, 'values are computed from the runs, without a CI, and Δ% is the ratio of the two values, with no verdict.'),
    doc.rows.length
      ? section('Variants across the sweep (' + doc.metric + ', ' + unit + '; each value the geomean of the commit\'s run medians)',
        el('div', {class: 'side-by-side'},
          el('div', {}, table([header1, header2], rows, {class: 'data matrix', id: 'ab-table'}),
            el('p', {class: 'muted', text: 'Δ% = candidate / baseline − 1. Coloured cells carry the experiment\'s verdict at that point (grey: within noise); uncoloured: the ratio of the two values only.'})),
          sweepBox))
      : message('info', 'This commit has no values yet.'),
    hypotheses.length ? section('What each candidate tried', el('ul', {}, hypotheses)) : null);
  if (!doc.rows.length || !doc.candidates.length) return;
  const u = drawSweep(sweepBox, {
    rows: doc.rows.map((r) => ({label: r.point.label, key: r.point.key, cells: r.cells})),
    candidates: doc.candidates.map((c) => c.name),
    baseline: doc.baseline.name,
    lowerIsBetter: doc.lower_is_better,
    width: chartWidth(sweepBox, 640),
    height: 300,
  });
  sweepBox.uplot = u;
  ctx.signal.addEventListener('abort', () => u.destroy());
}
