// The switches every page shares: which metric a page shows (any the bench
// declared, with its unit and direction) and which testbed it reads. Both
// live in the URL (dom.js STICKY), so a link keeps them.
import {el, route} from './dom.js';
import * as fmt from './format.js';

export function direction(lowerIsBetter) {
  return lowerIsBetter ? 'lower is better' : 'higher is better';
}

// "tokens_per_s (tokens/s, higher is better)"
export function metricTitle(m) {
  return m.name + ' (' + fmt.metricUnit(m.name, m.unit) + ', ' + direction(m.lower_is_better) + ')';
}

// A <select> of the document's declared metrics (`doc.metrics`), the shown
// one (`doc.metric`) selected; choosing one reloads the page's route with it.
export function metricSwitch(doc, path, params) {
  const metrics = doc.metrics || [];
  if (metrics.length < 2) return null;
  return el('label', {class: 'metric-switch'}, 'metric ',
    el('select', {name: 'metric', id: 'metric-switch', onchange: (e) => {
      const judged = metrics.find((m) => m.judged);
      const value = e.target.value === (judged && judged.name) ? null : e.target.value;
      window.location.hash = route(path, {...params, metric: value});
    }}, metrics.map((m) => el('option', {value: m.name, selected: m.name === doc.metric},
      metricTitle(m) + (m.judged ? ' — judged' : '')))));
}

// The request parameters every per-testbed document takes from the URL.
export function shared(ctx) {
  return {testbed: ctx.params.get('testbed') || undefined, metric: ctx.params.get('metric') || undefined};
}

// What the page says about a metric judging does not use.
export function notJudgedNote(doc, what) {
  if (!doc.judged_metric || doc.metric === doc.judged_metric) return null;
  return el('p', {class: 'message info', id: 'metric-note'},
    'Showing ' + doc.metric + ', which the bench reports but perfwatch does not judge: ' + what +
    ' Changes are judged on ' + doc.judged_metric + '.');
}

// "fixture-gpu (cuda, fixture GPU)"
export function testbedTitle(t) {
  return t.name + ' (' + t.backend + (t.device_name ? ', ' + t.device_name : '') + ')';
}

// A commit's page at its code host, from the server's --commit-url template
// (healthz.commit_url); null without one. Only an http(s) template is used,
// and the sha is percent-encoded into it; the DOM sets it as an attribute.
export function codeHostLink(template, sha, text = 'on the code host') {
  if (!template || !/^https?:\/\//.test(template)) return null;
  return el('a', {href: template.split('{sha}').join(encodeURIComponent(sha)), rel: 'noreferrer noopener', target: '_blank',
    class: 'code-host', text});
}
