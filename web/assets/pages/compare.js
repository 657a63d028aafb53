// Two commits side by side: per sweep point and variant, each commit's value,
// the change b against a coloured by its verdict, with the band and test
// that decided it (judging's own comparison where it made one, else the
// same comparison computed with judging's band); the commits in between
// (inherited ones marked); links to the code host.
import * as api from '../api.js';
import {codeHostLink, metricSwitch, notJudgedNote, shared, testbedTitle} from '../controls.js';
import {commitLink, el, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

// The two newest commits with runs of their own: what to compare by default.
async function newestTwo(signal) {
  const page = await api.get('/api/v1/commits', {limit: 50}, signal);
  const measured = page.commits.filter((c) => c.cost.runs > 0 && !c.inherited_from);
  return measured.length >= 2 ? [measured[1].sha, measured[0].sha] : [null, null];
}

function cellTitle(cmp) {
  if (!cmp) return 'one side has no value';
  const how = cmp.source === 'judged' ? 'as judged (' + cmp.basis + ')' : 'computed now with judging\'s band';
  return how + ': ratio ' + fmt.value(cmp.ratio) + ', 95% CI [' + fmt.value(cmp.ci_low) + ', ' + fmt.value(cmp.ci_high) +
    '], p = ' + fmt.pValue(cmp.p_value) + ', band ' + fmt.band(cmp.band_rel) +
    (cmp.band_calibrated === false ? ' (default, uncalibrated)' : cmp.band_calibrated ? ' (measured)' : '') +
    ', runs ' + cmp.runs_a + ' vs ' + cmp.runs_b + ' — ' + cmp.verdict.replace('_', ' ');
}

function compareTable(doc) {
  if (!doc.cells.length) return message('info', 'Neither commit has values on this testbed.');
  const header1 = [{text: 'Point', scope: 'col'}];
  const header2 = [{text: ''}];
  for (const v of doc.variants) {
    header1.push({text: v.name + (v.is_baseline ? ' (baseline)' : ''), colspan: 4, scope: 'colgroup'});
    header2.push({text: doc.a.short_sha.slice(0, 7)}, {text: doc.b.short_sha.slice(0, 7)}, {text: 'Δ%'}, {text: 'band'});
  }
  const rows = doc.points.map((p) => {
    const out = [{node: el('a', {href: route('/history', {variant: doc.variants[0]?.name, point: p.key}), title: p.key, text: p.label})}];
    for (const v of doc.variants) {
      const c = doc.cells.find((x) => x.variant === v.name && x.point_id === p.id);
      const cmp = c && c.comparison;
      out.push(fmt.value(c && c.a ? c.a.geomean_of_run_medians : null), fmt.value(c && c.b ? c.b.geomean_of_run_medians : null),
        {node: fmt.percent(cmp ? cmp.delta_rel : null), class: 'cell ' + fmt.verdictClass(cmp && cmp.verdict), title: cellTitle(cmp)},
        {node: cmp ? fmt.band(cmp.band_rel) + (cmp.band_calibrated === false ? '*' : '') : '–', class: 'muted'});
    }
    return out;
  });
  return table([header1, header2], rows, {class: 'data matrix', id: 'compare-table'});
}

function rangeList(doc, template) {
  if (doc.range === null) {
    return message('info', doc.a.short_sha + ' is not an ancestor of ' + doc.b.short_sha +
      ' on its first-parent line (within 1000 commits): no range between them.');
  }
  const inherited = doc.range.filter((c) => c.inherited_from).length;
  return el('div', {},
    el('p', {class: 'muted', id: 'range-summary', text: doc.range.length + ' commit' + (doc.range.length === 1 ? '' : 's') +
      ' after ' + doc.a.short_sha.slice(0, 7) + ' up to ' + doc.b.short_sha.slice(0, 7) +
      (inherited ? ', ' + inherited + ' of them inheriting results (no manifest path changed)' : '')}),
    table([['Commit', 'Subject', 'Author', 'Committed', '']], doc.range.slice().reverse().map((c) => [
      commitLink(c.sha), el('span', {class: 'subject', text: c.subject}), el('span', {text: c.author}), fmt.date(c.committed_at),
      {node: [c.inherited_from ? el('span', {class: 'badge inherited', text: 'inherits ' + c.inherited_from.slice(0, 7)}) : null,
        codeHostLink(template, c.sha, '↗')]}]), {class: 'data', id: 'range'}));
}

export async function compare(ctx) {
  const {testbed, metric} = shared(ctx);
  let a = ctx.params.get('a');
  let b = ctx.params.get('b');
  if (!a || !b) {
    const [na, nb] = await newestTwo(ctx.signal);
    a = a || na;
    b = b || nb;
  }
  const form = el('form', {class: 'pickers', id: 'compare-pick', onsubmit: (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    window.location.hash = route('/compare', {a: f.get('a').trim(), b: f.get('b').trim()});
  }},
  el('label', {}, 'a (reference) ', el('input', {name: 'a', value: a ? a.slice(0, 12) : '', size: 14, required: true, pattern: '[0-9a-fA-F]{4,64}'})),
  el('label', {}, 'b ', el('input', {name: 'b', value: b ? b.slice(0, 12) : '', size: 14, required: true, pattern: '[0-9a-fA-F]{4,64}'})),
  el('button', {type: 'submit', text: 'Compare'}),
  a && b ? el('a', {href: route('/compare', {a: b, b: a}), text: 'swap'}) : null);
  if (!a || !b) {
    ctx.setTitle('Compare');
    show(ctx.root, el('h1', {text: 'Compare two commits'}), form, message('info', 'Name two commits (a sha or a prefix of 4+ hex digits).'));
    return;
  }
  const [doc, health] = await Promise.all([
    api.get('/api/v1/compare', {a, b, testbed, metric}, ctx.signal),
    api.get('/healthz', {}, ctx.signal),
  ]);
  ctx.setTitle('Compare ' + doc.a.short_sha.slice(0, 7) + '…' + doc.b.short_sha.slice(0, 7));
  const side = (label, c) => el('li', {}, el('strong', {text: label + ' '}), commitLink(c.sha), ' ',
    el('span', {class: 'subject', text: c.subject}), el('span', {class: 'muted', text: ' — ' + c.author + ', ' + fmt.date(c.committed_at)}),
    c.inherited_from ? el('span', {class: 'muted', text: ' (carries the results of ' + c.inherited_from.slice(0, 10) + ')'}) : null,
    codeHostLink(health.commit_url, c.sha) ? [' · ', codeHostLink(health.commit_url, c.sha)] : null);
  const others = doc.testbeds.filter((t) => !doc.testbed || t.id !== doc.testbed.id);
  const counts = {};
  for (const c of doc.cells) if (c.comparison) counts[c.comparison.verdict] = (counts[c.comparison.verdict] || 0) + 1;
  show(ctx.root,
    el('h1', {}, 'Compare ', commitLink(doc.a.sha), ' → ', commitLink(doc.b.sha)),
    form,
    el('ul', {class: 'plain'}, side('a', doc.a), side('b', doc.b)),
    el('form', {class: 'pickers', onsubmit: (e) => e.preventDefault()}, metricSwitch(doc, '/compare', {a, b})),
    el('p', {class: 'muted', id: 'compare-testbed'}, doc.testbed ? 'On testbed ' + testbedTitle(doc.testbed) : 'No testbed has runs of both.',
      others.length ? [' · also measured on ', others.map((t, i) => [i ? ', ' : '',
        el('a', {href: route('/compare', {a, b, testbed: String(t.id)}), text: t.name})])] : null),
    notJudgedNote(doc, 'its bands are the manifest\'s default (marked *), not measured.'),
    section('b against a (' + doc.metric + ', ' + fmt.metricUnit(doc.metric, doc.unit) + ', ' +
        (doc.lower_is_better ? 'lower' : 'higher') + ' is better; each value the geomean of the commit\'s run medians)',
      el('p', {class: 'legend', id: 'compare-counts'}, ['regression', 'improvement', 'within_noise', 'undecided'].map((v) =>
        el('span', {class: 'cell ' + fmt.verdictClass(v), text: (counts[v] || 0) + ' ' + v.replace('_', ' ')}))),
      compareTable(doc),
      el('p', {class: 'muted', text: 'Δ% = b / a − 1, coloured by the verdict: judging\'s own where it compared these two commits, else the same test computed now with the band judging would use. Hover a cell for the ratio, its CI, p, the band and the runs.'})),
    section('Commits in between', rangeList(doc, health.commit_url)));
}

// Two runs side by side (GET /api/v1/runs/{a}/compare/{b}): per variant x
// point each run's median of the judged metric and b / a - 1. One run
// against one is no evidence of a change (the run is the unit of evidence
// between commits), so there is no verdict here: the page says so.
export async function compareRuns(ctx) {
  const a = ctx.params.get('a');
  const b = ctx.params.get('b');
  const form = el('form', {class: 'pickers', id: 'compare-runs-pick', onsubmit: (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    window.location.hash = route('/compare-runs', {a: f.get('a').trim(), b: f.get('b').trim()});
  }},
  el('label', {}, 'run a ', el('input', {name: 'a', value: a || '', size: 8, required: true, pattern: '[0-9]{1,19}'})),
  el('label', {}, 'run b ', el('input', {name: 'b', value: b || '', size: 8, required: true, pattern: '[0-9]{1,19}'})),
  el('button', {type: 'submit', text: 'Compare'}));
  if (!/^\d{1,19}$/.test(a || '') || !/^\d{1,19}$/.test(b || '')) {
    ctx.setTitle('Compare runs');
    show(ctx.root, el('h1', {text: 'Compare two runs'}), form, message('info', 'Name two runs by their number.'));
    return;
  }
  const doc = await api.get('/api/v1/runs/' + a + '/compare/' + b, {}, ctx.signal);
  ctx.setTitle('Runs #' + a + ' and #' + b);
  const rows = doc.rows.map((r) => [el('span', {text: r.variant}), el('span', {title: r.point.key, text: r.point.label}),
    fmt.value(r.a ? r.a.median : null), fmt.value(r.b ? r.b.median : null), fmt.percent(r.delta_rel)]);
  show(ctx.root,
    el('h1', {}, 'Run ', el('a', {href: route('/run/' + a), text: '#' + a}), ' → run ', el('a', {href: route('/run/' + b), text: '#' + b})),
    form,
    message('info', 'One run against one: the medians of their trials and the change, with no verdict — between commits the ' +
      'run is the unit of evidence, and one run a side cannot tell a change from run-to-run noise. Compare two commits for a verdict.'),
    section('b against a (' + doc.metric + ', ' + (doc.lower_is_better ? 'lower' : 'higher') + ' is better)',
      table([['Variant', 'Point', '#' + a, '#' + b, 'Δ%']], rows, {class: 'data matrix', id: 'compare-runs-table'})));
}
