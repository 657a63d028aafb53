// The dashboard's charts, drawn with uPlot: a point's history (one series,
// with its 95% CI as whiskers, the noise band shaded and flags marked),
// several series on one chart (every point of a variant, or every variant at
// a point), and the sweep view (each candidate's change against the
// baseline across the sweep points).
//
// Every chart zooms the way uPlot does it: dragging across the plot selects
// a range of x, which uPlot's cursor.drag.setScale turns into setScale('x')
// (the x range function passes the zoomed range through: it used to return
// the whole history always, which is why zooming did nothing); y is then
// ranged to the slots visible (a zoomed-in step is not flattened by the
// whole history's range). A double-click resets.
// Hovering shows a box with what the point is (built with textContent).
import {el} from './dom.js';
import * as fmt from './format.js';

// What the history's line is, in the legend and the tooltip.
export const VALUE_LABEL = 'geomean of run medians';

// Colours that read on a light and a dark page.
const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#475569', '#ea580c'];
const FLAG_COLORS = {
  regression: '#dc2626',
  improvement: '#16a34a',
  changepoint: '#7c3aed',
  drift: '#d97706',
  acknowledged: '#94a3b8',
};

export function seriesColor(i) {
  return PALETTE[i % PALETTE.length];
}

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

// Axis colours from the page's (light or dark) scheme.
function axis(extra) {
  const stroke = cssVar('--muted', '#64748b');
  const grid = cssVar('--line', '#e2e8f0');
  return {stroke, grid: {stroke: grid, width: 1}, ticks: {stroke: grid, width: 1}, ...extra};
}

function flagColor(flag) {
  if (flag.acknowledged || flag.withdrawn) return FLAG_COLORS.acknowledged;
  return FLAG_COLORS[flag.kind] || FLAG_COLORS.changepoint;
}

// The y range that shows `values(i)` for every i in [i0, i1], padded.
function fitY(count, i0, i1, values) {
  let lo = Infinity, hi = -Infinity;
  for (let i = Math.max(0, i0); i <= Math.min(count - 1, i1); i++) {
    for (const v of values(i)) {
      if (v !== null && v !== undefined && Number.isFinite(v)) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
  }
  if (!Number.isFinite(lo)) return {min: 0, max: 1};
  const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;
  return {min: lo - pad, max: hi + pad};
}

// Zoom and hover on x = 0..count-1 (one slot per commit or point):
//   - scales: x shows whole slots; y fits the slots x shows, which uPlot
//     gives each series as `idxs` (the data indices rendered) before it
//     ranges y;
//   - hooks: setCursor fills the tooltip.
// `yValues(i)` lists every number drawn at slot i (values, CI ends, band
// edges); `tip(i)` returns the tooltip's children for slot i.
function interaction(count, yValues, tip, tipBox) {
  const full = () => [-0.5, Math.max(count - 0.5, 0.5)];
  const shown = (u) => (u.series[0] && u.series[0].idxs ? u.series[0].idxs : [0, count - 1]);
  const place = (u) => {
    const i = u.cursor.idx;
    if (i === null || i === undefined || u.cursor.left < 0) {
      tipBox.hidden = true;
      return;
    }
    tipBox.replaceChildren(...tip(i));
    tipBox.hidden = false;
    const left = u.cursor.left + u.over.offsetLeft;
    const room = u.over.offsetLeft + u.over.clientWidth;
    const w = tipBox.offsetWidth;
    tipBox.style.left = Math.max(0, left + 14 + w > room ? left - 14 - w : left + 14) + 'px';
    tipBox.style.top = Math.max(0, u.cursor.top + u.over.offsetTop - 10) + 'px';
  };
  return {
    scales: {
      // uPlot passes the zoomed min/max here; the whole range pads half a slot.
      x: {time: false, range: (u, min, max) => (min <= 0 && max >= count - 1 ? full() : [min, max])},
      y: {range: (u) => {
        const [i0, i1] = shown(u);
        const r = fitY(count, i0, i1, yValues);
        return [r.min, r.max];
      }},
    },
    cursor: {drag: {x: true, y: false, setScale: true}, points: {size: 8}},
    hooks: {setCursor: [place]},
    visible: shown,
  };
}

function chartBox(container) {
  container.classList.add('chart-box');
  const tipBox = el('div', {class: 'chart-tip', role: 'tooltip', hidden: true});
  container.append(tipBox);
  return tipBox;
}

function tipLine(label, value, cls) {
  return el('div', {class: cls}, el('span', {class: 'muted', text: label + ' '}), el('span', {text: value}));
}

// The band around the previous measured value, per entry (null for the first).
function bandEdges(entries, bandRel) {
  const low = [], high = [];
  let previous = null;
  for (const e of entries) {
    const ref = previous ?? e.geomean_of_run_medians;
    low.push(ref === null ? null : ref * (1 - bandRel));
    high.push(ref === null ? null : ref * (1 + bandRel));
    if (e.geomean_of_run_medians !== null) previous = e.geomean_of_run_medians;
  }
  return {low, high};
}

function directionText(lowerIsBetter) {
  return lowerIsBetter ? 'lower is better' : 'higher is better';
}

// One variant x point along the branch (the history document). Clicking a
// point (not dragging) calls onPick(entry).
export function drawHistory(container, history, {width, height, onPick}) {
  const entries = history.entries;
  const xs = entries.map((_, i) => i);
  const values = entries.map((e) => e.geomean_of_run_medians);
  const edges = bandEdges(entries, history.band.band_rel);
  const unit = fmt.metricUnit(history.metric, history.unit);
  const tipBox = chartBox(container);

  const tip = (i) => {
    const e = entries[i];
    const out = [
      el('div', {class: 'tip-head'}, el('span', {class: 'sha', text: e.short_sha}), ' ', el('span', {text: e.subject})),
      tipLine('committed', fmt.date(e.committed_at)),
      tipLine(VALUE_LABEL, e.geomean_of_run_medians === null ? '–' : fmt.value(e.geomean_of_run_medians) + ' ' + unit),
      tipLine('95% CI', e.ci_low !== null && e.ci_high !== null
        ? '[' + fmt.value(e.ci_low) + ', ' + fmt.value(e.ci_high) + ']'
        : e.pooled ? 'none (one run)' : 'none: not judged yet'),
      tipLine('runs', String(e.runs.length)),
      tipLine('vs previous commit', fmt.percent(e.delta_rel)),
    ];
    if (e.inherited) out.push(el('div', {class: 'muted', text: 'inherits its results (no manifest path changed)'}));
    if (e.flag) {
      out.push(el('div', {class: 'tip-flag ' + fmt.verdictClass(e.flag.kind)},
        'flag: ' + e.flag.kind + ' ' + fmt.percent(e.flag.magnitude_rel) +
        (e.flag.acknowledged ? ' (acknowledged)' : e.flag.withdrawn ? ' (withdrawn)' : '') +
        (history.metric !== history.judged_metric ? ' — judged on ' + history.judged_metric : '')));
    }
    return out;
  };
  const zoom = interaction(entries.length, (i) => [values[i], entries[i].ci_low, entries[i].ci_high, edges.low[i], edges.high[i]], tip, tipBox);

  // Band under the series, whiskers and flag marks over them; all on the
  // chart's own canvas, in canvas pixels.
  const drawBand = (u) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = 'rgba(100, 116, 139, 0.18)';
    const step = entries.length > 1 ? Math.abs(u.valToPos(1, 'x', true) - u.valToPos(0, 'x', true)) : u.bbox.width;
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    for (let i = 0; i < entries.length; i++) {
      if (edges.low[i] === null) continue;
      const x = u.valToPos(i, 'x', true);
      const yTop = u.valToPos(edges.high[i], 'y', true);
      const yBottom = u.valToPos(edges.low[i], 'y', true);
      ctx.fillRect(x - step / 2, yTop, step, yBottom - yTop);
    }
    ctx.restore();
  };
  const drawMarks = (u) => {
    const ctx = u.ctx;
    const px = window.devicePixelRatio || 1;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    ctx.lineWidth = 1 * px;
    ctx.strokeStyle = cssVar('--whisker', '#1e3a8a');
    const cap = 3 * px;
    entries.forEach((e, i) => {
      if (e.ci_low === null || e.ci_high === null) return;
      const x = u.valToPos(i, 'x', true);
      const y0 = u.valToPos(e.ci_low, 'y', true), y1 = u.valToPos(e.ci_high, 'y', true);
      ctx.beginPath();
      ctx.moveTo(x, y0);
      ctx.lineTo(x, y1);
      ctx.moveTo(x - cap, y0);
      ctx.lineTo(x + cap, y0);
      ctx.moveTo(x - cap, y1);
      ctx.lineTo(x + cap, y1);
      ctx.stroke();
    });
    const size = 6 * px;
    entries.forEach((e, i) => {
      if (!e.flag || e.geomean_of_run_medians === null) return;
      const x = u.valToPos(i, 'x', true);
      const y = u.valToPos(e.ci_high ?? e.geomean_of_run_medians, 'y', true) - 4 * px;
      ctx.fillStyle = flagColor(e.flag);
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.lineTo(x - size, y - 1.7 * size);
      ctx.lineTo(x + size, y - 1.7 * size);
      ctx.closePath();
      ctx.fill();
    });
    ctx.restore();
  };

  const opts = {
    width,
    height,
    scales: zoom.scales,
    legend: {show: true},
    cursor: zoom.cursor,
    axes: [
      axis({
        values: (u, splits) => splits.map((v) => (Number.isInteger(v) && entries[v] ? entries[v].short_sha.slice(0, 7) : '')),
        space: 60,
      }),
      axis({label: history.metric + ' (' + unit + ', ' + directionText(history.lower_is_better) + ')', size: 70}),
    ],
    series: [
      {label: 'commit', value: (u, v) => (v === null || !entries[v] ? '–' : entries[v].short_sha + ' ' + entries[v].subject)},
      {label: VALUE_LABEL, stroke: PALETTE[0], width: 1.5, spanGaps: true, points: {show: true, size: 5, fill: PALETTE[0]},
        // The legend says how many runs it pools, and when the commit is not
        // judged yet (the same statistic over the runs listed, no CI).
        value: (u, v, si, i) => {
          if (v === null) return '–';
          const e = i === null || i === undefined ? null : entries[i];
          if (!e) return fmt.value(v);
          return fmt.value(v) + ' (' + e.runs.length + ' run' + (e.runs.length === 1 ? '' : 's') +
            (e.pooled ? (e.ci_low !== null ? ', 95% CI ' + fmt.value(e.ci_low) + '–' + fmt.value(e.ci_high) : '') : ', not judged yet') + ')';
        }},
    ],
    hooks: {...zoom.hooks, drawAxes: [drawBand], draw: [drawMarks]},
  };
  const u = new window.uPlot(opts, [xs, values], container);
  u.visibleSlots = () => zoom.visible(u).slice();  // for the browser test: which commits the zoom shows
  pickOnClick(u, (i) => onPick(entries[i]));
  return u;
}

// A click that is neither the end of a drag nor half of a double-click
// (which resets the zoom) opens what is under the cursor.
function pickOnClick(u, pick) {
  let downAt = null;
  let pending = null;
  u.over.addEventListener('mousedown', (e) => { downAt = e.clientX; });
  u.over.addEventListener('click', (e) => {
    const dragged = downAt !== null && Math.abs(e.clientX - downAt) > 3;
    downAt = null;
    const i = u.cursor.idx;
    clearTimeout(pending);
    if (dragged || i === null || i === undefined || e.detail > 1) return;
    pending = setTimeout(() => pick(i), 250);
  });
  u.over.addEventListener('dblclick', () => clearTimeout(pending));
}

// Several series over the same slots: `labels[i]` names slot i on the axis,
// `series` is [{label, values}] (a value may be null), `yLabel` heads the
// axis, `xName` names what a slot is ("commit", "point"), `format(v)` prints a value, `tipHead(i)` heads the tooltip and
// `tipExtra(i, s)` adds to a series' line. `zeroLine` draws y = 0 (deltas).
export function drawLines(container, {labels, xName, series, yLabel, format, tipHead, tipExtra, zeroLine, width, height, onPick}) {
  const count = labels.length;
  const tipBox = chartBox(container);
  const tip = (i) => [
    el('div', {class: 'tip-head'}, tipHead ? tipHead(i) : labels[i]),
    ...series.map((s, k) => el('div', {},
      el('span', {class: 'swatch c' + (k % PALETTE.length)}),
      el('span', {class: 'muted', text: s.label + ' '}),
      el('span', {text: format(s.values[i])}),
      tipExtra ? el('span', {class: 'muted', text: tipExtra(i, s) || ''}) : null)),
  ];
  const zoom = interaction(count, (i) => [...series.map((s) => s.values[i]), zeroLine ? 0 : null], tip, tipBox);
  const drawZero = (u) => {
    if (!zeroLine) return;
    const ctx = u.ctx;
    const y = u.valToPos(0, 'y', true);
    if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) return;
    ctx.save();
    ctx.strokeStyle = cssVar('--muted', '#64748b');
    ctx.setLineDash([4, 4]);
    ctx.beginPath();
    ctx.moveTo(u.bbox.left, y);
    ctx.lineTo(u.bbox.left + u.bbox.width, y);
    ctx.stroke();
    ctx.restore();
  };
  const opts = {
    width,
    height,
    scales: zoom.scales,
    legend: {show: true},
    cursor: zoom.cursor,
    axes: [
      axis({values: (u, splits) => splits.map((v) => (Number.isInteger(v) && v >= 0 && v < count ? labels[v] : '')), space: 50}),
      axis({label: yLabel, size: 70}),
    ],
    series: [
      {label: xName || 'at', value: (u, v) => (v === null || v === undefined || !labels[v] ? '–' : labels[v])},
      ...series.map((s, k) => ({label: s.label, stroke: seriesColor(k), width: 1.5, spanGaps: true,
        points: {show: true, size: 5, fill: seriesColor(k)}, value: (u, v) => format(v)})),
    ],
    hooks: {...zoom.hooks, drawAxes: [drawZero]},
  };
  const u = new window.uPlot(opts, [labels.map((_, i) => i), ...series.map((s) => s.values)], container);
  u.visibleSlots = () => zoom.visible(u).slice();
  if (onPick) pickOnClick(u, onPick);
  return u;
}

// The users' sweep view: for each candidate its change against the baseline
// (delta_rel, as a document gives it) across the sweep points.
// `rows`: [{label, key, cells: [{candidate, delta_rel, verdict}]}].
export function drawSweep(container, {rows, candidates, baseline, lowerIsBetter, width, height}) {
  const series = candidates.map((name) => ({
    label: name,
    values: rows.map((r) => {
      const c = r.cells.find((x) => x.candidate === name);
      return c && c.delta_rel !== null && c.delta_rel !== undefined ? c.delta_rel * 100 : null;
    }),
    verdicts: rows.map((r) => (r.cells.find((x) => x.candidate === name) || {}).verdict || null),
  }));
  return drawLines(container, {
    labels: rows.map((r) => r.label),
    xName: 'point',
    series,
    yLabel: 'Δ% vs ' + baseline + ' (' + directionText(lowerIsBetter) + ')',
    format: (v) => (v === null || v === undefined ? '–' : fmt.percent(v / 100)),
    tipHead: (i) => rows[i].label + (rows[i].key && rows[i].key !== rows[i].label ? ' (' + rows[i].key + ')' : ''),
    tipExtra: (i, s) => (s.verdicts[i] ? ' ' + s.verdicts[i].replace('_', ' ') : ''),
    zeroLine: true,
    width,
    height,
  });
}

// A chart's width: its box's, within bounds.
export function chartWidth(box, max = 1400) {
  return Math.max(260, Math.min(box.clientWidth || 960, max));
}
