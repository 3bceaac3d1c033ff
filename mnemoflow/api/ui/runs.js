// The latest evaluation runs (with their report pages, shown in a sandboxed frame: no script runs
// in them) and this tenant's quality-check runs with the expectations that failed.
import { api, el, empty, when } from './lib.js';

function figures(summary) {
  return Object.entries(summary).slice(0, 8).map(([name, value]) => `${name} ${value === null ? '-'
    : (Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(3))}`).join(' · ');
}

async function openReport(run, frame) {
  const page = await api(`/v1/runs/${encodeURIComponent(run.run_id)}/report`, { text: true });
  frame.replaceChildren(el('h3', {}, `${run.suite} run of ${when(run.created_at)}`),
    el('iframe', { class: 'report', sandbox: '', title: `${run.suite} report`, srcdoc: page }));
}

export async function render(root) {
  const runs = await api('/v1/runs');
  const frame = el('div', { id: 'report' });
  const evaluations = runs.evaluations.length ? el('table', { id: 'evaluations' },
    el('thead', {}, el('tr', {}, ['suite', 'when', 'headline figures', 'report'].map((h) => el('th', {}, h)))),
    el('tbody', {}, runs.evaluations.map((run) => el('tr', {}, el('td', {}, run.suite), el('td', {}, when(run.created_at)),
      el('td', {}, figures(run.summary)),
      el('td', {}, run.has_report ? el('button', { type: 'button', onclick: () => openReport(run, frame)
        .catch((error) => frame.replaceChildren(empty(`Could not open the report: ${error.message}`))) }, 'Open')
        : '-')))))
    : empty('No evaluation has run yet (`mnemoflow maintain evaluate`, or the daily schedule of `mnemoflow serve`).');
  const quality = runs.quality.length ? el('ol', { class: 'items', id: 'quality' }, runs.quality.map((run) => el('li', {},
    el('div', {}, el('span', { class: `badge ${run.failed ? 'past' : 'current'}` }, run.failed ? `${run.failed} failed` : 'all held'),
      `${run.expectations} expectations · ${when(run.run_at)}`),
    run.failures.length ? el('ul', {}, run.failures.map((f) => el('li', {},
      `${f.suite}: ${f.expectation}${f.unexpected_count ? ` (${f.unexpected_count} rows)` : ''}`,
      f.failing_ids.length ? el('span', { class: 'meta' }, ` e.g. ${f.failing_ids.slice(0, 5).join(', ')}`) : ''))) : '')))
    : empty('No quality check of this tenant has run yet (`mnemoflow maintain check --tenant ...`).');
  root.append(el('h2', {}, 'Evaluation runs'), evaluations, frame, el('h2', {}, 'Quality checks of this tenant'), quality);
}
