// Numbers and times as the users read them.

export function percent(rel, digits = 1) {
  if (rel === null || rel === undefined || !Number.isFinite(rel)) return '–';
  const v = rel * 100;
  return (v > 0 ? '+' : v < 0 ? '−' : '±') + Math.abs(v).toFixed(digits) + '%';
}

export function band(rel) {
  if (rel === null || rel === undefined || !Number.isFinite(rel)) return '–';
  return '±' + (rel * 100).toFixed(1) + '%';
}

export function value(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1000) return v.toFixed(0);
  if (a >= 100) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}

export function pValue(p) {
  if (p === null || p === undefined || !Number.isFinite(p)) return '–';
  return p < 1e-3 ? p.toExponential(1) : p.toFixed(3);
}

export function seconds(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return '–';
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
  if (s < 3600) return (s / 60).toFixed(1) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

export function date(unix) {
  if (!unix) return '–';
  return new Date(unix * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

// A metric as the documents declare it: its unit (the manifest's, e.g.
// 'tokens/s'), else its name. perfwatch knows no metric by name.
export function metricUnit(metric, unit) {
  return unit || metric;
}

// The verdict's meaning for a change: which CSS class colours it.
export function verdictClass(verdict) {
  return verdict ? 'v-' + String(verdict).replace(/[^a-z_]/g, '') : 'v-none';
}

// The band and the test that judged a comparison (the API's judged_by): says
// when the band is the manifest's default (uncalibrated).
const TESTS = {
  pooled_t: 't-test on log run medians pooled with the measured band',
  welch_t: "Welch's t-test on log run medians",
  paired_pooled_t: 'paired t-test on per-run log ratios pooled with the measured band',
  paired_t: 'paired t-test on per-run log ratios',
};
export function judgedBy(j) {
  if (!j) return 'not judged';
  const which = j.band === 'default' ? ' (the manifest\'s default: uncalibrated)' : j.band === 'measured' ? ' (measured)' : '';
  const test = j.test ? TESTS[j.test] || j.test : 'test not recorded';
  return 'band ' + band(j.band_rel) + which + '; ' + test + ', flagged outside the band at p < ' + j.alpha;
}
