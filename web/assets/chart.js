// The history chart of one variant x point, drawn with uPlot: each commit's
// value -- the geometric mean of its run medians (history.statistic), the
// statistic commits are compared by -- as a line with points, its 95% CI as
// whiskers, the noise band shaded (for each commit: the previous commit's
// value +- the band, the zone a change must leave to be flagged), flagged
// commits marked. Clicking a point calls onPick(entry).

// What the line is, in the legend and the tooltip.
export const VALUE_LABEL = 'geomean of run medians';

const COLORS = {
  line: '#2563eb',
  whisker: '#1e3a8a',
  band: 'rgba(100, 116, 139, 0.18)',
  regression: '#dc2626',
  improvement: '#16a34a',
  changepoint: '#7c3aed',
  drift: '#d97706',
  acknowledged: '#94a3b8',
};

function flagColor(flag) {
  if (flag.acknowledged || flag.withdrawn) return COLORS.acknowledged;
  return COLORS[flag.kind] || COLORS.changepoint;
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

export function drawHistory(container, history, {width, height, onPick}) {
  const entries = history.entries;
  const xs = entries.map((_, i) => i);
  const values = entries.map((e) => e.geomean_of_run_medians);
  const edges = bandEdges(entries, history.band.band_rel);

  let lo = Infinity, hi = -Infinity;
  entries.forEach((e, i) => {
    for (const v of [e.geomean_of_run_medians, e.ci_low, e.ci_high, edges.low[i], edges.high[i]]) {
      if (v !== null && Number.isFinite(v)) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
  });
  if (!Number.isFinite(lo)) {
    lo = 0;
    hi = 1;
  }
  const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;

  // Band under the series, whiskers and flag marks over them; all on the
  // chart's own canvas, in canvas pixels.
  const drawBand = (u) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = COLORS.band;
    const step = entries.length > 1 ? Math.abs(u.valToPos(1, 'x', true) - u.valToPos(0, 'x', true)) : u.bbox.width;
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
    ctx.lineWidth = 1 * px;
    ctx.strokeStyle = COLORS.whisker;
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
    scales: {
      x: {time: false, range: (u, min, max) => [-0.5, Math.max(entries.length - 0.5, 0.5)]},
      y: {range: () => [lo - pad, hi + pad]},
    },
    legend: {show: true},
    cursor: {drag: {x: true, y: false, setScale: true}, points: {size: 8}},
    axes: [
      {
        values: (u, splits) => splits.map((v) => (Number.isInteger(v) && entries[v] ? entries[v].short_sha.slice(0, 7) : '')),
        space: 60,
      },
      {label: history.metric + ' (' + (history.unit || history.metric) + ', ' +
        (history.lower_is_better ? 'lower is better' : 'higher is better') + ')', size: 70},
    ],
    series: [
      {label: 'commit', value: (u, v) => (v === null || !entries[v] ? '–' : entries[v].short_sha + ' ' + entries[v].subject)},
      {label: VALUE_LABEL, stroke: COLORS.line, width: 1.5, spanGaps: true, points: {show: true, size: 5, fill: COLORS.line},
        // The tooltip says how many runs it pools, and when the commit is not
        // judged yet (the same statistic over the runs listed, no CI).
        value: (u, v, si, i) => {
          if (v === null) return '–';
          const e = i === null || i === undefined ? null : entries[i];
          if (!e) return v.toFixed(3);
          return v.toFixed(3) + ' (' + e.runs.length + ' run' + (e.runs.length === 1 ? '' : 's') +
            (e.pooled ? (e.ci_low !== null ? ', 95% CI ' + e.ci_low.toFixed(3) + '–' + e.ci_high.toFixed(3) : '') : ', not judged yet') + ')';
        }},
    ],
    hooks: {drawAxes: [drawBand], draw: [drawMarks]},
  };
  const u = new window.uPlot(opts, [xs, values], container);
  // A click (not a drag) on the plot opens the commit under the cursor.
  u.over.addEventListener('click', () => {
    const i = u.cursor.idx;
    if (i !== null && i !== undefined && entries[i]) onPick(entries[i]);
  });
  return u;
}
