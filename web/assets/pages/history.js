// History of any variant x point along the branch: pick them, see the chart
// (band shaded, CI whiskers, flags marked), click a point to open its commit.
import * as api from '../api.js';
import {drawHistory} from '../chart.js';
import {badge, commitLink, el, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

const LIMITS = [50, 100, 200, 500, 1000];

export async function history(ctx) {
  const series = await api.get('/api/v1/series', {}, ctx.signal);
  if (!series.variants.length || !series.points.length) {
    show(ctx.root, el('h1', {text: 'History'}), message('info', 'Nothing has been measured yet.'));
    return;
  }
  const variant = ctx.params.get('variant') || series.variants[0].name;
  const point = ctx.params.get('point') || series.points[0].key;
  const limit = LIMITS.includes(Number(ctx.params.get('limit'))) ? Number(ctx.params.get('limit')) : 200;

  const go = (changes) => {
    window.location.hash = route('/history', {variant, point, limit, ...changes});
  };
  const select = (name, options, current, onchange) =>
    el('label', {}, name + ' ',
      el('select', {name, onchange: (e) => onchange(e.target.value)},
        options.map(([value, text]) => el('option', {value, selected: String(value) === String(current)}, text))));
  const h = await api.get('/api/v1/history', {variant, point, limit}, ctx.signal);
  // The point as the server resolved it (the URL may name it by label or by part of its axes).
  const pickers = el('form', {class: 'pickers', onsubmit: (e) => e.preventDefault()},
    select('variant', series.variants.map((v) => [v.name, v.name + (v.is_baseline ? ' (baseline)' : '')]), variant,
      (v) => go({variant: v})),
    select('point', series.points.map((p) => [p.key, p.label + ' — ' + p.key]), h.point.key, (p) => go({point: p})),
    select('commits', LIMITS.map((n) => [n, 'last ' + n]), limit, (n) => go({limit: n})));
  const chart = el('div', {class: 'history-chart', id: 'history-chart'});
  const b = h.band;
  const bandText = 'Shaded: the noise band ' + fmt.band(b.band_rel) + ' around the previous commit — ' +
    (b.calibrated ? 'measured (' + b.source + ', ' + b.k_runs + ' runs): ' + b.method : 'not calibrated yet: the manifest\'s default');
  const flagged = h.entries.filter((e) => e.flag);
  show(ctx.root,
    el('h1', {}, 'History of ', el('span', {text: h.variant}), ' at ', el('span', {text: h.point.label}),
      el('span', {class: 'muted', text: ' (' + h.point.key + ')'})),
    pickers,
    h.entries.length ? chart : message('info', 'No measurement of this variant at this point on ' + h.branch + '.'),
    el('p', {class: 'muted', id: 'band-note', text: bandText}),
    el('p', {class: 'muted', id: 'value-note', text: 'Line: each commit\'s geometric mean of its run medians (each run\'s value is the median of its trials) — the statistic commits are compared by. Whiskers: its 95% CI over the runs. Triangles: flags (red regression, green improvement, orange drift, grey acknowledged or withdrawn). Click a point to open its commit; drag to zoom, double-click to reset.'}),
    section('Flagged commits in this history',
      flagged.length
        ? table([['Commit', 'Subject', 'Flag', 'Change']], flagged.slice().reverse().map((e) => [
          commitLink(e.sha), el('span', {class: 'subject', text: e.subject}),
          {node: [badge(e.flag.kind), e.flag.acknowledged ? ' acknowledged' : '']},
          {node: fmt.percent(e.flag.magnitude_rel), class: fmt.verdictClass(e.flag.kind)}]), {class: 'data', id: 'flagged'})
        : message('ok', 'No flag here.')));
  if (!h.entries.length) return;
  const width = Math.max(280, Math.min(chart.clientWidth || 960, 1400));  // its content box, padding left out
  const u = drawHistory(chart, h, {
    width,
    height: 360,
    onPick: (entry) => {
      window.location.hash = route('/commit/' + entry.sha);
    },
  });
  chart.uplot = u;  // for the browser test: it clicks a flagged point through the chart's own coordinates
  ctx.signal.addEventListener('abort', () => u.destroy());
}
