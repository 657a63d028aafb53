// One commit on every testbed, side by side: its variant x point table (each
// cell the value and its change against the previous measured commit,
// coloured by verdict) per testbed, and how many cells each testbed judged a
// regression -- the users' "is it a Hopper-only regression?".
import * as api from '../api.js';
import {metricSwitch, notJudgedNote, shared, testbedTitle} from '../controls.js';
import {commitLink, el, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

const VERDICTS = ['regression', 'improvement', 'within_noise', 'undecided'];

function testbedTable(doc, testbedId) {
  const t = doc.table;
  if (!t.cells.length) return message('info', 'No values on this testbed.');
  const header = ['Point', ...t.variants.map((v) => v.name + (v.is_baseline ? ' (baseline)' : ''))];
  const rows = t.points.map((p) => [
    {node: el('a', {href: route('/history', {variant: t.variants[0]?.name, point: p.key, testbed: String(testbedId)}), title: p.key, text: p.label})},
    ...t.variants.map((v) => {
      const c = t.cells.find((x) => x.variant === v.name && x.point_id === p.id);
      if (!c || !c.value) return {text: '–'};
      const cmp = c.comparison;
      return {
        node: [el('span', {class: 'value', text: fmt.value(c.value.geomean_of_run_medians)}), ' ',
          el('span', {class: 'delta', text: cmp ? fmt.percent(cmp.delta_rel) : ''})],
        class: 'cell ' + fmt.verdictClass(cmp && cmp.verdict),
        title: cmp ? 'vs ' + (doc.against ? doc.against.short_sha : 'previous') + ': band ' + fmt.band(cmp.band_rel) +
          ', p = ' + fmt.pValue(cmp.p_value) + ' — ' + cmp.verdict.replace('_', ' ') : 'no comparison',
      };
    }),
  ]);
  return table([header], rows, {class: 'data matrix testbed-table', dataset: {testbed: String(testbedId)}});
}

export async function testbeds(ctx) {
  const sha = ctx.match[1].toLowerCase();
  const {metric} = shared(ctx);
  const list = (await api.get('/api/v1/testbeds', {}, ctx.signal)).testbeds;
  const docs = await Promise.all(list.map((t) =>
    api.get('/api/v1/commits/' + encodeURIComponent(sha), {testbed: String(t.id), metric}, ctx.signal)));
  const first = docs[0];
  if (!first) {
    show(ctx.root, el('h1', {text: 'On every testbed'}), message('info', 'No testbed has measured anything yet.'));
    return;
  }
  const c = first.commit;
  ctx.setTitle(c.short_sha.slice(0, 7) + ' on every testbed');
  const shown = list.map((t, i) => ({t, doc: docs[i]})).filter(({doc}) => doc.table.cells.length);

  // Per testbed: how many cells got each verdict against its previous commit.
  const summary = table([['Testbed', 'Compared with', ...VERDICTS.map((v) => v.replace('_', ' '))]], shown.map(({t, doc}) => {
    const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0]));
    for (const cell of doc.table.cells) if (cell.comparison) counts[cell.comparison.verdict] += 1;
    return [el('span', {text: testbedTitle(t)}), doc.against ? commitLink(doc.against.sha) : '–',
      ...VERDICTS.map((v) => ({text: String(counts[v]), class: counts[v] ? 'cell ' + fmt.verdictClass(v) : 'muted'}))];
  }), {class: 'data', id: 'testbed-summary'});

  show(ctx.root,
    el('h1', {}, commitLink(c.sha), ' ', el('span', {class: 'subject', text: c.subject}), ' on every testbed'),
    el('p', {}, el('a', {href: route('/commit/' + c.sha, {testbed: null}), text: '← the commit\'s page'})),
    el('form', {class: 'pickers', onsubmit: (e) => e.preventDefault()}, metricSwitch(first, '/commit/' + c.sha + '/testbeds', {})),
    notJudgedNote(first, 'values are computed from the runs and carry no verdict.'),
    shown.length ? null : message('info', 'No testbed has values for this commit.'),
    section('Verdicts per testbed (cells against each testbed\'s previous measured commit)', summary),
    el('div', {class: 'testbed-columns', id: 'testbed-columns'}, shown.map(({t, doc}) =>
      el('section', {class: 'testbed-column'},
        el('h2', {}, el('span', {text: testbedTitle(t)})),
        el('p', {class: 'muted', text: doc.metric + ' (' + fmt.metricUnit(doc.metric, doc.unit) + ', ' +
          (doc.lower_is_better ? 'lower' : 'higher') + ' is better)' + (doc.against ? ', change vs ' + doc.against.short_sha.slice(0, 7) : '')}),
        testbedTable(doc, t.id)))));
}
