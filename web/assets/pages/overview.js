// Overview: what is being measured now (and any commit given up on), the
// open alert groups (triaged here with the token), and the latest commits with their status and cost
// (paged: 25 at a time).
import * as api from '../api.js';
import {badge, commitLink, el, link, message, route, section, show, table} from '../dom.js';
import * as fmt from '../format.js';

const PAGE = 25;

function runningPanel(jobs) {
  const running = jobs.jobs.filter((j) => j.state === 'running');
  const queued = jobs.counts.queued || 0;
  const summary = el('p', {class: 'muted'},
    running.length ? '' : 'Nothing is being measured now. ', queued + ' job' + (queued === 1 ? '' : 's') + ' queued.');
  const items = running.map((j) => {
    // The daemon's typed report (schemas/store/job_progress.schema.json).
    const p = j.progress || {runs: [], report: null};
    const d = p.report || {};
    const lines = [];
    const head = [el('strong', {}, 'Measuring '), commitLink(j.commit_sha)];
    if (d.step) head.push(' — ', badge(d.step));
    if (d.purpose) head.push(' ', el('span', {text: d.purpose}));
    lines.push(el('div', {}, head));
    if (d.points) {
      lines.push(el('div', {class: 'muted'},
        'point ' + d.point_index + ' of ' + d.points + (d.point ? ' (' + d.point + ')' : '') +
        (d.variant ? ', variant ' + d.variant : '') + (d.trials !== null ? ', ' + d.trials + ' trials' : '') +
        (d.elapsed_s !== null ? ', ' + fmt.seconds(d.elapsed_s) : '')));
    }
    p.runs.forEach((r, i) => {
      const planned = r.cells_planned || null;
      lines.push(el('div', {class: 'progress-line'},
        el('span', {text: 'run ' + (i + 1) + (d.runs_planned ? ' of ' + d.runs_planned : '') + ' '}),
        el('progress', {max: planned || 1, value: planned ? Math.min(r.cells_done, planned) : 0}),
        el('span', {class: 'muted', text: ' ' + r.cells_done + (planned ? '/' + planned : '') + ' cells, ' + r.trials + ' trials stored'})));
    });
    return el('li', {class: 'running-job'}, lines);
  });
  return el('div', {id: 'running'}, summary, running.length ? el('ul', {class: 'plain'}, items) : null);
}

// Commits given up on (cut off max_attempts times): not measured until
// someone re-queues them (on the commit's page, or `perfwatch jobs requeue`).
function givenUpPanel(givenUp) {
  if (!givenUp.jobs.length) return null;
  return el('div', {id: 'given-up'},
    message('error', givenUp.jobs.length + (givenUp.has_more ? '+' : '') + ' job' + (givenUp.jobs.length === 1 ? '' : 's') +
      ' given up on: not measured until re-queued.'),
    table([['Commit', 'Job', 'Attempts', 'Why']], givenUp.jobs.map((j) => [commitLink(j.commit_sha), '#' + j.id,
      String(j.attempts - j.stops), el('span', {class: 'muted', text: j.message})]), {class: 'data'}));
}

// Open alert groups: the flags of one commit on one testbed, triaged as one
// (every kind: regression, improvement, change point, drift). A group
// closes when a person triages it with the token, or when a later commit
// undoes it (judging marks it recovered).
function groupsPanel(groups, writes, onDone) {
  if (!groups.groups.length) return message('ok', 'No open alert group.');
  const rows = groups.groups.map((g) => {
    const w = g.worst;
    const where = w.variant + ' ' + w.point_label;
    const open = g.open + ' of ' + g.flags.length + ' open';
    return [commitLink(g.sha), el('span', {text: g.testbed}), el('span', {class: 'subject', text: g.subject}),
      {node: fmt.percent(w.magnitude_rel), class: w.regression ? 'v-regression' : 'v-improvement',
        title: w.kind + ' at ' + where + ' — ' + fmt.judgedBy(worstFlag(g).judged_by)},
      el('span', {text: where}), String(g.cells), el('span', {class: 'muted', text: g.kinds.join(', ')}),
      {node: [el('span', {class: 'muted', text: open}), ' ', triageForm(g, writes, onDone)]}];
  });
  return table([['Commit', 'Testbed', 'Subject', 'Worst', 'Where', 'Cells', 'Kinds', 'Triage']], rows,
    {class: 'data', id: 'alert-groups'});
}

function worstFlag(g) {
  return g.flags.find((f) => f.id === g.worst.flag_id) || {};
}

function triageForm(group, writes, onDone) {
  if (!writes) return null;
  const as = el('select', {name: 'triage', 'aria-label': 'triage as'},
    el('option', {value: 'ack', text: 'acknowledge'}), el('option', {value: 'invalid', text: 'invalid'}),
    el('option', {value: 'expected', text: 'expected'}));
  const reason = el('input', {type: 'text', name: 'reason', placeholder: 'reason', required: true, maxlength: 2000});
  const token = el('input', {type: 'password', name: 'token', placeholder: 'token', required: true, autocomplete: 'off'});
  const status = el('span', {class: 'muted'});
  return el('form', {class: 'triage', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api.post('/api/v1/alert-groups/' + encodeURIComponent(group.sha) + '/triage',
        {triage: as.value, reason: reason.value, testbed: group.testbed || String(group.testbed_id)}, token.value);
      onDone();
    } catch (err) {
      status.textContent = err.message;
    }
  }}, as, ' ', reason, ' ', token, ' ', el('button', {type: 'submit', text: 'Triage group'}), ' ', status);
}

// Groups closed lately: what was decided, and which commit undid which.
function closedPanel(groups) {
  if (!groups.groups.length) return null;
  const rows = groups.groups.map((g) => {
    const t = g.triage;
    return [commitLink(g.sha), el('span', {text: g.testbed}), el('span', {class: 'subject', text: g.subject}),
      {node: badge(g.state)},
      {node: t ? [t.linked_sha ? [commitLink(t.linked_sha), ' '] : null,
        el('span', {class: 'muted', text: t.reason + (t.by ? ' — ' + t.by : '')})] : ''}];
  });
  return el('details', {id: 'closed-groups'}, el('summary', {text: 'Closed lately (' + groups.groups.length + ')'}),
    table([['Commit', 'Testbed', 'Subject', 'State', 'Why']], rows, {class: 'data'}));
}

function commitsTable(page) {
  const rows = page.commits.map((c) => {
    const s = c.status;
    const state = s.latest_job_state || (c.inherited_from ? 'inherited' : 'not queued');
    const statusCell = [badge(state)];
    if (s.latest_build_status && s.latest_build_status !== 'ok') statusCell.push(' ', badge('build ' + s.latest_build_status, 'failed'));
    if (s.latest_run_status && !['ok', state].includes(s.latest_run_status)) statusCell.push(' ', badge('run ' + s.latest_run_status, s.latest_run_status));
    const inherited = c.inherited_from ? el('span', {class: 'muted'}, ' (results of ', commitLink(c.inherited_from), ')') : null;
    return [commitLink(c.sha), el('span', {class: 'subject'}, el('span', {text: c.subject}), inherited),
      el('span', {text: c.author}), fmt.date(c.committed_at), {node: statusCell},
      String(c.cost.runs), String(c.cost.trials), fmt.seconds(c.cost.total_s),
      s.open_regressions ? {node: String(s.open_regressions), class: 'v-regression'} : '0'];
  });
  return table([['Commit', 'Subject', 'Author', 'Committed', 'Status', 'Runs', 'Trials', 'Cost', 'Regressions']], rows,
    {class: 'data', id: 'commits'});
}

export async function overview(ctx) {
  const offset = Math.max(0, parseInt(ctx.params.get('offset') || '0', 10) || 0);
  const [commits, groups, closed, health, jobs, givenUp] = await Promise.all([
    api.get('/api/v1/commits', {limit: PAGE, offset}, ctx.signal),
    // The header's testbed picker narrows the open groups to one testbed.
    api.get('/api/v1/alert-groups', {state: 'open', limit: 100, testbed: ctx.params.get('testbed') || undefined}, ctx.signal),
    api.get('/api/v1/alert-groups', {state: 'closed', limit: 10, testbed: ctx.params.get('testbed') || undefined}, ctx.signal),
    api.get('/healthz', {}, ctx.signal),
    api.get('/api/v1/jobs', {limit: 20}, ctx.signal),
    api.get('/api/v1/jobs', {state: 'gave_up', limit: 20}, ctx.signal),
  ]);
  const pager = el('p', {class: 'pager'},
    offset > 0 ? link('/', {offset: Math.max(0, offset - PAGE)}, '← newer') : null,
    ' commits ' + (offset + 1) + '–' + (offset + commits.commits.length) + ' on ' + commits.branch + ' ',
    commits.has_more ? link('/', {offset: offset + PAGE}, 'older →') : null);
  let running = runningPanel(jobs);
  show(ctx.root,
    el('h1', {text: 'Overview'}),
    section('Now', running, givenUpPanel(givenUp)),
    section('Open alert groups', groupsPanel(groups, health.writes, () => window.dispatchEvent(new HashChangeEvent('hashchange'))), closedPanel(closed)),
    section('Latest commits', commitsTable(commits), pager),
    el('p', {class: 'muted'}, 'Charts: ', el('a', {href: route('/history'), text: 'history of any variant × point'}),
      ' · ', el('a', {href: route('/ab'), text: 'A/B of the variants'})));

  // The running job's progress, refreshed while this page is shown.
  const timer = setInterval(async () => {
    try {
      const fresh = runningPanel(await api.get('/api/v1/jobs', {limit: 20}, ctx.signal));
      running.replaceWith(fresh);
      running = fresh;
    } catch (e) {
      /* the next tick tries again */
    }
  }, 5000);
  ctx.signal.addEventListener('abort', () => clearInterval(timer));
}
