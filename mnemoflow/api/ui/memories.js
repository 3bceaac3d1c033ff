// Memories: the owner's current memories, or a search, narrowed by kind and time; each opens to
// its history (every version and the commits that wrote them) and its citations.
import { MEMORY_KINDS, api, citationList, dayBound, el, empty, owner, select, when } from './lib.js';

function filtersOf(form) {
  const data = new FormData(form);
  return { q: (data.get('q') || '').trim(), kind: data.get('kind') || '', since: dayBound(data.get('since')),
    until: dayBound(data.get('until'), true) };
}

async function load(filters) {
  if (filters.q) {
    const conditions = {};
    if (filters.kind) conditions.kind = filters.kind;
    const written = {};
    if (filters.since) written.gte = filters.since;
    if (filters.until) written.lt = filters.until;
    if (Object.keys(written).length) conditions.created_at = written;
    const found = await api('/v1/search', { method: 'POST',
      body: owner({ query: filters.q, limit: 50, filters: Object.keys(conditions).length ? conditions : null }) });
    return found.results.map((r) => ({ id: r.id, content: r.memory, created_at: r.created_at, score: r.score }));
  }
  const listed = await api('/v1/memories', { params: owner({ limit: 200, kind: filters.kind, since: filters.since,
    until: filters.until }) });
  return listed.results.map((r) => ({ id: r.id, content: r.memory, created_at: r.created_at, kind: filters.kind }));
}

function historyList(entries) {
  return el('ol', { class: 'history' }, entries.map((h) => el('li', {},
    `${when(h.created_at)} ${h.event || h.op} by ${h.actor}`,
    h.event === 'UPDATE' && h.old_memory !== h.new_memory ? `: “${h.old_memory}” → “${h.new_memory}”` : '',
    h.event === 'ADD' ? `: “${h.new_memory}”` : '')));
}

async function openDetails(memory, panel, button) {
  if (!panel.hidden) {
    panel.hidden = true;
    button.textContent = 'History and citations';
    return;
  }
  panel.hidden = false;
  button.textContent = 'Hide';
  panel.replaceChildren(el('p', { class: 'note' }, 'Loading…'));
  const id = encodeURIComponent(memory.id);
  try {
    const [history, citations] = await Promise.all([
      api(`/v1/memories/${id}/history`, { params: owner() }), api(`/v1/memories/${id}/citations`, { params: owner() })]);
    panel.replaceChildren(el('h4', {}, 'History'), historyList(history), el('h4', {}, 'Citations'),
      citationList(citations));
  } catch (error) {
    panel.replaceChildren(el('p', { class: 'empty' }, `Could not load its history: ${error.message}`));
  }
}

function memoryItem(memory) {
  const panel = el('div', { class: 'details', hidden: true });
  const button = el('button', { type: 'button' }, 'History and citations');
  button.addEventListener('click', () => openDetails(memory, panel, button));
  const badges = [memory.kind ? el('span', { class: 'badge' }, memory.kind) : null,
    memory.pinned ? el('span', { class: 'badge' }, 'pinned') : null];
  return el('li', { class: 'memory', dataset: { id: memory.id } },
    el('div', { class: 'memory-text' }, memory.content),
    el('div', { class: 'meta' }, badges, `written ${when(memory.created_at)}`,
      memory.score !== undefined && memory.score !== null ? ` · score ${Number(memory.score).toFixed(3)}` : '',
      ` · ${memory.id} `, button),
    panel);
}

export async function render(root) {
  const list = el('ol', { class: 'items', id: 'memory-list' });
  const status = el('p', { class: 'note', id: 'memory-status' });
  const form = el('form', { class: 'filters', role: 'search' },
    el('input', { type: 'search', name: 'q', placeholder: 'Search memories…', 'aria-label': 'search memories' }),
    select('kind', 'kind', MEMORY_KINDS),
    el('label', {}, 'written from ', el('input', { type: 'date', name: 'since' })),
    el('label', {}, 'to ', el('input', { type: 'date', name: 'until' })),
    el('button', { type: 'submit', class: 'primary' }, 'Show'));
  async function refresh() {
    const filters = filtersOf(form);
    const found = await load(filters);
    list.replaceChildren(...found.map(memoryItem));
    status.textContent = filters.q ? `${found.length} memories match “${filters.q}”, best first`
      : `${found.length} current memories of ${owner().user_id}, newest first`;
    if (!found.length) list.append(empty('No memories match.'));
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try { await refresh(); } catch (error) { list.replaceChildren(empty(`Could not load memories: ${error.message}`)); }
  });
  root.append(el('h2', {}, 'Memories'), form, status, list);
  await refresh();
}
