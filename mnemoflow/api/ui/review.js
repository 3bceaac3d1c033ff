// The review queue (relationship decisions the pipeline was unsure of) and the conflicts waiting for
// a person, each with both memories and the buttons that decide it.
import { api, el, empty, owner, showMessage, when } from './lib.js';

async function decide(action, done) {
  try {
    const said = await action();
    showMessage(said, 'info');
    await done();
  } catch (error) {
    showMessage(`The decision was refused: ${error.message}`);
  }
}

function pair(leftTitle, left, rightTitle, right) {
  return el('div', { class: 'pair' }, el('div', {}, el('h4', {}, leftTitle), left),
    el('div', {}, el('h4', {}, rightTitle), right));
}

function memoryText(content, current) {
  return el('span', {}, content || '(gone)', current ? '' : el('span', { class: 'badge past' }, 'deleted or superseded'));
}

function reviewItem(item, refresh) {
  const id = encodeURIComponent(item.review_id);
  return el('li', { class: 'review', dataset: { id: item.review_id } },
    el('div', {}, el('span', { class: 'badge' }, item.proposed_type), `confidence ${item.confidence.toFixed(2)}`,
      item.reason ? ` · ${item.reason}` : '', el('span', { class: 'meta' }, ` · queued ${when(item.created_at)}`)),
    pair('New memory', memoryText(item.src_content, item.src_current),
      'Existing memory', memoryText(item.dst_content, item.dst_current)),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', onclick: () => decide(async () => {
        await api(`/v1/reviews/${id}/accept`, { method: 'POST', body: owner() });
        return `Accepted: ${item.proposed_type} applied.`;
      }, refresh) }, `Accept (${item.proposed_type})`),
      el('button', { type: 'button', onclick: () => decide(async () => {
        await api(`/v1/reviews/${id}/reject`, { method: 'POST', body: owner() });
        return 'Rejected: both memories stay as they are.';
      }, refresh) }, 'Reject')));
}

function conflictItem(conflict, refresh) {
  const id = encodeURIComponent(conflict.link_id);
  const keep = (memory) => (memory ? `Kept “${memory.content}”.` : 'Kept both.');
  const button = (label, memory, primary = false) => el('button', { type: 'button', class: primary ? 'primary' : null,
    disabled: !conflict.decidable, onclick: () => decide(async () => {
      await api(`/v1/conflicts/${id}/resolve`, { method: 'POST', body: owner({ keep: memory ? memory.id : null }) });
      return keep(memory);
    }, refresh) }, label);
  const [older, newer] = conflict.src.created_at <= conflict.dst.created_at ? [conflict.src, conflict.dst]
    : [conflict.dst, conflict.src];
  return el('li', { class: 'conflict', dataset: { id: conflict.link_id } },
    el('div', {}, el('span', { class: 'badge' }, conflict.type), `confidence ${conflict.confidence.toFixed(2)}`,
      conflict.reason ? ` · ${conflict.reason}` : ''),
    pair(`Older (${when(older.observed_at || older.created_at)})`, older.content,
      `Newer (${when(newer.observed_at || newer.created_at)})`, newer.content),
    el('div', { class: 'actions' }, button('Keep the newer (accept the change)', newer, true),
      button('Keep the older', older), button('Keep both (reject)', null)),
    conflict.decidable ? null : el('p', { class: 'note' }, 'A shared memory of another user: its owner decides.'));
}

export async function render(root) {
  const reviews = el('div', { id: 'reviews' });
  const conflicts = el('div', { id: 'conflicts' });
  async function refresh() {
    const [queued, waiting] = await Promise.all([api('/v1/reviews', { params: owner() }),
      api('/v1/conflicts', { params: owner() })]);
    reviews.replaceChildren(queued.length ? el('ol', { class: 'items' }, queued.map((i) => reviewItem(i, refresh)))
      : empty('No relationship waits for review.'));
    conflicts.replaceChildren(waiting.conflicts.length
      ? el('ol', { class: 'items' }, waiting.conflicts.map((c) => conflictItem(c, refresh)))
      : empty('No conflict waits for a decision.'));
  }
  root.append(el('h2', {}, 'Review queue'),
    el('p', { class: 'note' }, 'Relationships the pipeline was unsure of (confidence 0.5-0.85). Accepting applies one as an automatic decision would: an UPDATES makes the existing memory a past version.'),
    reviews, el('h2', {}, 'Conflicts'),
    el('p', { class: 'note' }, 'Current memories linked CONFLICTS_WITH or MAY_UPDATE. Keeping one makes it replace the other; keeping both settles the pair.'),
    conflicts);
  await refresh();
}
