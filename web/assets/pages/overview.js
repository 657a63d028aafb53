// Overview: what is being measured now (and any commit given up on), the
// open regressions, and the latest commits with their status and cost
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

function regressionsPanel(flags) {
  if (!flags.flags.length) return message('ok', 'No open regression.');
  // One row per commit: how many points, the worst, where.
  const byCommit = new Map();
  for (const f of flags.flags) {
    const row = byCommit.get(f.sha) || {sha: f.sha, subject: f.subject, flags: [], worst: 0};
    row.flags.push(f);
    if (Math.abs(f.magnitude_rel) > Math.abs(row.worst)) row.worst = f.magnitude_rel;
    byCommit.set(f.sha, row);
  }
  const rows = [...byCommit.values()].map((r) => {
    const where = [...new Set(r.flags.map((f) => f.variant + ' ' + f.point_label))];
    return [commitLink(r.sha), el('span', {class: 'subject', text: r.subject}), String(r.flags.length),
      {node: fmt.percent(r.worst), class: 'v-regression'},
      el('span', {class: 'muted', text: where.slice(0, 6).join(', ') + (where.length > 6 ? ', …' : '')})];
  });
  return table([['Commit', 'Subject', 'Flags', 'Worst', 'Where']], rows, {class: 'data'});
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
  const [commits, flags, jobs, givenUp] = await Promise.all([
    api.get('/api/v1/commits', {limit: PAGE, offset}, ctx.signal),
    // The header's testbed picker narrows the open regressions to one testbed.
    api.get('/api/v1/flags', {state: 'open', kind: 'regression', limit: 200, testbed: ctx.params.get('testbed') || undefined}, ctx.signal),
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
    section('Open regressions', regressionsPanel(flags)),
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
