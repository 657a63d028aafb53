// Negative results (and positive ones): what was tried, grouped by
// investigation (a Perf-Experiment id, or the parameter change a variant
// A/B tries) with its current verdict and the verdicts before it; then a
// search -- by words, verdict, a parameter such as num_warps=8 -- with each
// verdict and the evidence behind it, point by point. A verdict is never
// "no effect" while a point is still undecided (shown_verdict).
import * as api from '../api.js';
import {badge, commitLink, el, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

const VERDICTS = ['', 'rejected', 'no_effect', 'mixed', 'accepted', 'pending'];
const SOURCES = ['', 'auto', 'trailer', 'manual'];
const PAGE = 20;

// The band that judged a point, and whether it was measured or the
// manifest's default (uncalibrated).
function bandText(j) {
  if (!j) return '–';
  return fmt.band(j.band_rel) + (j.band === 'default' ? ' (default)' : '');
}

// One investigation: its current verdict, and each experiment's before it.
function investigationRow(inv) {
  const history = inv.history.map((h) => el('a', {href: route('/experiments', {id: h.experiment_id}),
    title: (h.sha ? h.sha.slice(0, 10) + ': ' : '') + h.headline, class: 'step'}, badge(h.shown_verdict)));
  const all = inv.kind === 'params' ? route('/experiments', {param: inv.title.split(' ')})
    : inv.kind === 'group' ? route('/experiments', {group: inv.title}) : route('/experiments', {id: inv.key.split(':')[1]});
  return [el('a', {href: all, text: inv.title}), el('span', {class: 'muted', text: inv.kind}), {node: badge(inv.verdict)},
    el('span', {class: 'history'}, history.slice(0, 20), inv.history.length > 20 ? ' …' : null),
    el('span', {class: 'muted', text: inv.conclusion || inv.hypothesis})];
}

function investigationsTable(found) {
  if (!found.investigations.length) return message('info', 'No experiment yet.');
  return table([['Investigation', 'Kind', 'Now', 'Verdicts, newest first', 'Conclusion or hypothesis']],
    found.investigations.map(investigationRow), {class: 'data', id: 'investigations'});
}

function evidenceTable(x) {
  if (!x.evidence || !x.evidence.length) return message('info', 'No evidence recorded.');
  return table([['Candidate', 'Point', 'Baseline', 'Candidate', 'Δ%', 'Band', 'p', 'Runs', 'Verdict']],
    x.evidence.map((r) => [
      el('span', {text: r.candidate.length > 16 ? r.candidate.slice(0, 10) : r.candidate}),
      el('span', {title: r.point_key, text: r.point_label}),
      fmt.value(r.baseline_value), fmt.value(r.candidate_value),
      {node: fmt.percent(r.delta_rel), class: 'cell ' + fmt.verdictClass(r.verdict)},
      {node: bandText(r.judged_by), title: fmt.judgedBy(r.judged_by)}, fmt.pValue(r.p_value), String(r.runs), {node: badge(r.verdict)}]),
    {class: 'data evidence'});
}

function card(x) {
  const candidates = x.candidates.map((c) => c.name
    ? el('span', {}, el('strong', {text: c.name}), ' ', el('code', {text: JSON.stringify(c.params || {})}))
    : el('span', {}, 'commit ', commitLink(String(c.commit || ''))));
  const baseline = x.baseline.variant
    ? el('span', {}, el('strong', {text: x.baseline.variant}), ' ', el('code', {text: JSON.stringify(x.baseline.params || {})}))
    : x.baseline.commit ? el('span', {}, 'commit ', commitLink(String(x.baseline.commit))) : el('span', {text: JSON.stringify(x.baseline)});
  const commits = x.refs.filter((r) => r.commit_sha).map((r) => [commitLink(r.commit_sha), ' ']);
  return el('article', {class: 'experiment verdict-' + x.verdict, dataset: {id: String(x.id)}},
    el('header', {}, badge(x.shown_verdict || x.verdict), ' ', el('span', {class: 'hypothesis', text: x.hypothesis || '(no hypothesis)'})),
    el('p', {class: 'muted'}, '#' + x.id + ' · ' + x.source + (x.group_key ? ' · group ' : ''), x.group_key ? el('span', {text: x.group_key}) : null,
      ' · ' + fmt.date(x.created_at), commits.length ? el('span', {}, ' · ', commits) : null),
    el('p', {}, 'baseline ', baseline, ' · candidate ', candidates),
    x.conclusion ? el('p', {class: 'conclusion'}, el('strong', {}, 'Conclusion: '), el('span', {text: x.conclusion})) : null,
    evidenceTable(x));
}

export async function experiments(ctx) {
  const id = ctx.params.get('id');
  if (id) {
    const x = await api.get('/api/v1/experiments/' + encodeURIComponent(id), {}, ctx.signal);
    show(ctx.root, el('h1', {text: 'Experiment #' + x.id}), el('p', {}, el('a', {href: route('/experiments'), text: '← all experiments'})), card(x));
    return;
  }
  const q = ctx.params.get('q') || '';
  const verdict = ctx.params.get('verdict') || '';
  const source = ctx.params.get('source') || '';
  const params = ctx.params.getAll('param').filter((p) => p);
  const group = ctx.params.get('group') || '';
  const offset = Math.max(0, parseInt(ctx.params.get('offset') || '0', 10) || 0);

  const form = el('form', {class: 'search', id: 'experiment-search', onsubmit: (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    window.location.hash = route('/experiments', {
      q: f.get('q').trim(), verdict: f.get('verdict'), source: f.get('source'),
      param: f.get('param').split(/[\s,]+/).filter((p) => p),
    });
  }},
  el('label', {}, 'words ', el('input', {type: 'search', name: 'q', value: q, placeholder: 'e.g. num_stages gather', maxlength: 200})), ' ',
  el('label', {}, 'verdict ', el('select', {name: 'verdict'}, VERDICTS.map((v) => el('option', {value: v, selected: v === verdict}, v ? v.replace('_', ' ') : 'any')))), ' ',
  el('label', {}, 'parameter ', el('input', {type: 'text', name: 'param', value: params.join(' '), placeholder: 'num_warps=8'})), ' ',
  el('label', {}, 'source ', el('select', {name: 'source'}, SOURCES.map((v) => el('option', {value: v, selected: v === source}, v || 'any')))), ' ',
  el('button', {type: 'submit', text: 'Search'}));

  const [found, investigations] = await Promise.all([
    api.get('/api/v1/experiments', {q, verdict, source, param: params, group, limit: PAGE, offset}, ctx.signal),
    api.get('/api/v1/investigations', {q, limit: 50}, ctx.signal),
  ]);
  const here = {q, verdict, source, param: params, group};
  const pager = el('p', {class: 'pager'},
    offset > 0 ? el('a', {href: route('/experiments', {...here, offset: Math.max(0, offset - PAGE)}), text: '← previous'}) : null, ' ',
    found.has_more ? el('a', {href: route('/experiments', {...here, offset: offset + PAGE}), text: 'next →'}) : null);
  show(ctx.root,
    el('h1', {text: 'Experiments and negative results'}),
    el('p', {class: 'muted', text: 'What was tried, and what happened: every A/B of a variant and every Perf-Hypothesis, with its verdict and its evidence point by point.'}),
    section('Investigations', investigationsTable(investigations)),
    el('h2', {text: 'Experiments'}),
    form,
    el('div', {id: 'experiments'},
      found.experiments.length ? found.experiments.map(card) : message('info', 'No experiment matches.')),
    pager);
}
