// One commit: its message, runs and builds, the variant x point table with
// each cell's change against the previous commit coloured by verdict
// (within noise greyed), its flags (acknowledge with the token), experiments,
// and its jobs (a job given up on can be re-queued with the token).
import * as api from '../api.js';
import {chartWidth, drawSweep} from '../chart.js';
import {codeHostLink, metricSwitch, notJudgedNote, shared} from '../controls.js';
import {badge, commitLink, el, link, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

function cellOf(doc, variant, pointId) {
  return doc.table.cells.find((c) => c.variant === variant && c.point_id === pointId);
}

function changeTable(doc) {
  const t = doc.table;
  if (!t.cells.length) return message('info', 'No values for this commit yet.');
  const header = [{text: 'Point', scope: 'col'}, ...t.variants.map((v) => ({text: v.name + (v.is_baseline ? ' (baseline)' : ''), scope: 'col'}))];
  const rows = t.points.map((p) => [
    {node: el('a', {href: route('/history', {variant: t.variants[0]?.name, point: p.key}), title: p.key, text: p.label})},
    ...t.variants.map((v) => {
      const c = cellOf(doc, v.name, p.id);
      if (!c) return {text: '–'};
      const value = c.value ? fmt.value(c.value.geomean_of_run_medians) : '–';
      const cmp = c.comparison;
      if (!cmp) return {node: el('span', {}, value, el('a', {class: 'hist', href: route('/history', {variant: v.name, point: p.key}), title: 'history', text: ' ↗'})), class: 'v-none'};
      const title = (c.value ? 'geomean of ' + c.value.runs + ' run medians; ' : '') + 'vs ' + (doc.against ? doc.against.short_sha : 'previous') + ': ratio ' + fmt.value(cmp.ratio) +
        ', 95% CI [' + fmt.value(cmp.ci_low) + ', ' + fmt.value(cmp.ci_high) + '], p = ' + fmt.pValue(cmp.p_value) +
        ', runs ' + cmp.runs + ' vs ' + cmp.against_runs + ' — ' + cmp.verdict.replace('_', ' ') + '; ' + fmt.judgedBy(cmp.judged_by);
      return {
        node: el('span', {}, el('span', {class: 'value', text: value}), ' ', el('span', {class: 'delta', text: fmt.percent(cmp.delta_rel)}),
          el('a', {class: 'hist', href: route('/history', {variant: v.name, point: p.key}), title: 'history', text: ' ↗'})),
        class: 'cell ' + fmt.verdictClass(cmp.verdict),
        title,
      };
    }),
  ]);
  return table([header], rows, {class: 'data matrix', id: 'change-table'});
}

function ackForm(flag, writes, onDone) {
  if (flag.acknowledged || !writes) return null;
  const reason = el('input', {type: 'text', name: 'reason', placeholder: 'reason', required: true, maxlength: 2000});
  const token = el('input', {type: 'password', name: 'token', placeholder: 'token', required: true, autocomplete: 'off'});
  const status = el('span', {class: 'muted'});
  return el('form', {class: 'ack', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api.post('/api/v1/flags/' + flag.id + '/acknowledge', {reason: reason.value}, token.value);
      onDone();
    } catch (err) {
      status.textContent = err.message;
    }
  }}, reason, ' ', token, ' ', el('button', {type: 'submit', text: 'Acknowledge'}), ' ', status);
}

function requeueForm(sha, onDone) {
  const token = el('input', {type: 'password', name: 'token', placeholder: 'token', required: true, autocomplete: 'off'});
  const status = el('span', {class: 'muted'});
  return el('form', {class: 'requeue', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api.post('/api/v1/commits/' + encodeURIComponent(sha) + '/requeue', {}, token.value);
      onDone();
    } catch (err) {
      status.textContent = err.message;
    }
  }}, token, ' ', el('button', {type: 'submit', text: 'Re-queue'}), ' ', status);
}

// Newest first. A job given up on (cut off max_attempts times, nothing
// redoes it) says so and offers to re-queue the commit.
function jobsTable(doc, writes, onDone) {
  if (!doc.jobs.length) return message('info', 'No job for this commit.');
  const rows = doc.jobs.map((j) => {
    const action = j.state === 'gave_up'
      ? (writes ? requeueForm(doc.commit.sha, onDone)
        : el('span', {class: 'muted', text: 'perfwatch jobs requeue ' + doc.commit.sha.slice(0, 10)}))
      : null;
    return ['#' + j.id, j.kind, {node: badge(j.state)}, String(j.attempts) + (j.stops ? ' (' + j.stops + ' stopped)' : ''),
      fmt.date(j.finished_at ?? j.started_at ?? j.enqueued_at), el('span', {class: 'muted', text: j.message}), {node: action}];
  });
  return table([['Job', 'Kind', 'State', 'Attempts', 'When', 'Message', 'Re-queue']], rows, {class: 'data', id: 'jobs'});
}

// The sweep view beside the table: each candidate variant's change against
// the baseline across the sweep points (the A/B document's deltas).
function sweepSection(abDoc) {
  if (!abDoc || !abDoc.rows.length || !abDoc.candidates.length) return {node: null, draw: () => null};
  const box = el('div', {class: 'sweep-chart', id: 'sweep-chart'});
  const node = section('Candidates against ' + abDoc.baseline.name + ' across the sweep (Δ%, ' + abDoc.metric + ')', box,
    el('p', {class: 'muted'}, 'Each line: a candidate variant\'s change against the baseline at each sweep point. ',
      link('/ab', {commit: abDoc.commit.sha}, 'The A/B table'), ' has the values and verdicts.'));
  const draw = () => {
    const u = drawSweep(box, {
      rows: abDoc.rows.map((r) => ({label: r.point.label, key: r.point.key, cells: r.cells})),
      candidates: abDoc.candidates.map((x) => x.name),
      baseline: abDoc.baseline.name,
      lowerIsBetter: abDoc.lower_is_better,
      width: chartWidth(box, 900),
      height: 260,
    });
    box.uplot = u;
    return u;
  };
  return {node, draw};
}

export async function commit(ctx) {
  const sha = ctx.match[1].toLowerCase();
  const {testbed, metric} = shared(ctx);
  const [doc, health, abDoc] = await Promise.all([
    api.get('/api/v1/commits/' + encodeURIComponent(sha), {testbed, metric}, ctx.signal),
    api.get('/healthz', {}, ctx.signal),
    api.get('/api/v1/ab', {commit: sha, testbed, metric}, ctx.signal).catch(() => null),
  ]);
  const c = doc.commit;
  ctx.setTitle(c.short_sha.slice(0, 7) + ' ' + c.subject);
  const reload = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  const header = el('div', {class: 'commit-head'},
    el('h1', {}, el('span', {class: 'sha', text: c.short_sha}), ' ', el('span', {class: 'subject', id: 'commit-subject', text: c.subject})),
    el('p', {class: 'muted'}, el('span', {text: c.author}), ' · ', fmt.date(c.committed_at), ' · ', el('code', {text: c.sha})),
    doc.inherited_from
      ? message('info', 'This commit changed none of the manifest\'s paths: it carries the results of ' + doc.inherited_from.short_sha + ' (no build, no bench time).')
      : null,
    el('pre', {class: 'message-body', id: 'commit-message', text: c.message}),
    el('p', {class: 'commit-links'}, link('/ab', {commit: c.sha}, 'A/B of its variants'), ' · ',
      doc.against ? el('span', {}, 'compared with ', commitLink(doc.against.sha), ' (',
        el('a', {href: route('/compare', {a: doc.against.sha, b: c.sha}), id: 'compare-previous',
          text: c.parent_sha === doc.against.sha ? 'compare' : 'compare, with the commits in between'}), ')')
        : 'no previous measured commit',
      ' · ', el('a', {href: route('/commit/' + c.sha + '/testbeds'), id: 'every-testbed', text: 'on every testbed'}),
      codeHostLink(health.commit_url, c.sha) ? [' · ', codeHostLink(health.commit_url, c.sha)] : null,
      doc.testbed ? el('span', {class: 'muted', text: ' · testbed ' + doc.testbed.name + ' (' + doc.testbed.backend + ', ' + doc.testbed.device_name + ')'}) : null),
    el('form', {class: 'pickers', id: 'compare-form', onsubmit: (e) => {
      e.preventDefault();
      const other = new FormData(e.target).get('a').trim();
      window.location.hash = route('/compare', {a: other, b: c.sha});
    }}, el('label', {}, 'compare with ', el('input', {name: 'a', size: 14, required: true, pattern: '[0-9a-fA-F]{4,64}',
      value: doc.against ? doc.against.sha.slice(0, 12) : '', placeholder: 'sha'})), ' ', el('button', {type: 'submit', text: 'Compare'}),
    ' ', metricSwitch(doc, '/commit/' + c.sha, {})));

  const flags = doc.flags.length
    ? table([['Flag', 'Variant', 'Point', 'Change', 'Band that judged', 'State']], doc.flags.map((f) => [
      {node: badge(f.kind)}, el('span', {text: f.variant}), el('span', {text: f.point_label}),
      {node: fmt.percent(f.magnitude_rel), class: fmt.verdictClass(f.kind)},
      {node: fmt.band(f.judged_by.band_rel) + (f.judged_by.band === 'default' ? ' (default)' : ''), title: fmt.judgedBy(f.judged_by)},
      {node: f.acknowledged
        ? el('span', {class: 'muted', text: 'acknowledged by ' + f.acknowledged.by + ': ' + f.acknowledged.reason})
        : [badge('open'), ' ', ackForm(f, health.writes, reload)]}]), {class: 'data', id: 'flags'})
    : message('ok', 'No flag on this commit.');

  const runs = doc.runs.length
    ? table([['Run', 'Kind', 'Status', 'Trials', 'Wall', 'Started', 'What it was for']], doc.runs.map((r) => [
      el('a', {href: route('/run/' + r.id), text: '#' + r.id}), r.kind, {node: badge(r.status)}, String(r.trial_count),
      fmt.seconds(r.wall_s), fmt.date(r.started_at),
      el('span', {class: 'muted', text: [r.purpose, r.message].filter(Boolean).join(' — ') || '–'})]), {class: 'data', id: 'runs'})
    : message('info', doc.inherited_from ? 'No runs of its own.' : 'No runs yet.');
  const builds = doc.builds.length
    ? table([['Build', 'Status', 'Duration', 'Toolchain']], doc.builds.map((b) => [
      '#' + b.id, {node: badge(b.status)}, fmt.seconds(b.duration_s), el('span', {text: b.toolchain})]), {class: 'data'})
    : null;
  const experiments = doc.experiments.length
    ? el('ul', {}, doc.experiments.map((x) => el('li', {}, badge(x.verdict), ' ',
      el('a', {href: route('/experiments', {id: x.id}), text: x.hypothesis || '(no hypothesis)'}))))
    : message('info', 'No experiment refers to this commit.');

  const sweep = sweepSection(abDoc);
  show(ctx.root,
    header,
    section('Variants × sweep points (' + doc.metric + ', ' + fmt.metricUnit(doc.metric, doc.unit) + ', ' +
        (doc.lower_is_better ? 'lower' : 'higher') + ' is better: geomean of run medians; change vs the previous measured commit)',
      notJudgedNote(doc, 'values are computed from the runs, without a CI, and have no verdict here; compare two commits for one.'),
      changeTable(doc),
      el('p', {class: 'legend'}, el('span', {class: 'cell v-regression', text: 'regression'}), ' ',
        el('span', {class: 'cell v-improvement', text: 'improvement'}), ' ',
        el('span', {class: 'cell v-within_noise', text: 'within noise'}), ' ',
        el('span', {class: 'cell v-undecided', text: 'undecided'}))),
    sweep.node,
    section('Flags', flags),
    section('Experiments', experiments),
    section('Runs', runs, builds),
    section('Jobs', jobsTable(doc, health.writes, reload)),
    doc.annotations.length ? section('Notes', el('ul', {}, doc.annotations.map((a) =>
      el('li', {}, el('span', {text: a.text}), el('span', {class: 'muted', text: ' — ' + a.author + ', ' + fmt.date(a.at)}))))) : null);
  const u = sweep.draw();
  if (u) ctx.signal.addEventListener('abort', () => u.destroy());
}
