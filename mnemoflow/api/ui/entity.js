// One entity's page: its card (counts, neighbours by relation and by shared memories, key relations,
// recent mentions with citations), its neighbourhood graph, its evolution chain and its memories.
import { api, citationList, el, empty, entityLink, owner, when } from './lib.js';
import { drawGraph, legend } from './graph.js';

function summary(entity) {
  const aliases = entity.aliases.length ? ` · also ${entity.aliases.join(', ')}` : '';
  return el('p', { class: 'meta' }, el('span', { class: 'badge' }, entity.type),
    `${entity.mention_count} mentions (${entity.current_mentions} current) · hotness ${entity.hotness.toFixed(2)}`,
    ` · first seen ${when(entity.first_seen)} · last seen ${when(entity.last_seen)}${aliases}`);
}

function state(current) {
  return el('span', { class: `badge ${current ? 'current' : 'past'}` }, current ? 'current' : 'past');
}

function step(s) {
  return el('li', { class: 'step', dataset: { id: s.memory_id } }, state(s.is_latest),
    el('span', { class: 'fact' }, s.content), el('span', { class: 'meta' }, ` said ${when(s.said_at)}`),
    s.replaced_by.map((r) => el('div', { class: 'replaced' },
      `→ replaced ${when(r.at)} by “${r.content}”`, r.reason ? ` (${r.reason}; ${r.decided_by || 'auto'})` : '')));
}

export function evolution(answer) {
  const changed = answer.chains.filter((c) => c.steps.length > 1);
  const single = answer.chains.filter((c) => c.steps.length === 1);
  const parts = [];
  if (!changed.length) parts.push(empty('No fact about it has been replaced yet.'));
  for (const chain of changed) parts.push(el('ol', { class: 'evolution' }, chain.steps.map(step)));
  if (single.length) {
    parts.push(el('h4', {}, `Facts never replaced (${single.length})`),
      el('ul', { class: 'evolution' }, single.map((c) => step(c.steps[0]))));
  }
  if (answer.truncated) parts.push(el('p', { class: 'note' }, 'Only the newest memories naming it are shown.'));
  return el('div', { id: 'evolution' }, parts);
}

function neighbours(card) {
  const byRelation = card.neighbours_by_relation.map((n) => el('li', {}, entityLink(n.entity),
    ` ${n.direction === 'in' ? '←' : '→'} ${n.predicates.join(', ')} `, state(n.current)));
  const byMemory = card.neighbours_by_memory.map((n) => el('li', {}, entityLink(n.entity),
    ` · ${n.shared_memories} shared ${n.shared_memories === 1 ? 'memory' : 'memories'}`));
  return el('div', { id: 'neighbours' },
    el('h4', {}, 'By relation'), byRelation.length ? el('ul', {}, byRelation) : empty('None.'),
    el('h4', {}, 'By shared memories'), byMemory.length ? el('ul', {}, byMemory) : empty('None.'));
}

function relations(card) {
  if (!card.key_relations.length) return empty('No relations stated about it.');
  const end = (id, name) => (name ? el('a', { class: 'entity', href: `#/entity/${encodeURIComponent(id)}` }, name) : id);
  return el('table', {}, el('thead', {}, el('tr', {}, ['subject', 'relation', 'object', 'memories', ''].map((h) => el('th', {}, h)))),
    el('tbody', {}, card.key_relations.map((r) => el('tr', {}, el('td', {}, end(r.subject, r.subject_name)),
      el('td', {}, r.predicate), el('td', {}, end(r.object, r.object_name)), el('td', {}, r.memories),
      el('td', {}, state(r.current))))));
}

function cited(items, id) {
  if (!items.length) return empty('No memories.');
  return el('ol', { class: 'items', id }, items.map(({ memory, citations }) => el('li', { class: 'memory' },
    state(memory.is_latest), el('span', { class: 'memory-text' }, memory.content),
    el('div', { class: 'meta' }, `${memory.kind} · said ${when(memory.observed_at || memory.created_at)} · ${memory.id}`),
    el('details', {}, el('summary', {}, 'citations'), citationList(citations)))));
}

async function drawNeighbourhood(container, note, id, depth) {
  const graph = await api(`/v1/entities/${encodeURIComponent(id)}/graph`, { params: owner({ depth, max_nodes: 120 }) });
  container.replaceChildren();
  drawGraph(container, graph, id);
  note.textContent = `${graph.elements.nodes.length} entities within ${graph.depth} hops`
    + (graph.note ? ` (${graph.note})` : '');
}

export async function render(root, id) {
  const path = `/v1/entities/${encodeURIComponent(id)}`;
  const [card, evolved, memories] = await Promise.all([api(path, { params: owner() }),
    api(`${path}/evolution`, { params: owner() }),
    api(`${path}/memories`, { params: owner({ include_history: true, limit: 200 }) })]);
  const canvas = el('div', { class: 'graph small', id: 'entity-graph' });
  const note = el('p', { class: 'note' });
  const depth = el('select', { name: 'depth', 'aria-label': 'hops' }, [1, 2, 3].map((d) => el('option', { value: d }, `${d} hop${d > 1 ? 's' : ''}`)));
  depth.addEventListener('change', async () => {
    try { await drawNeighbourhood(canvas, note, id, depth.value); } catch (error) { note.textContent = `Could not draw it: ${error.message}`; }
  });
  root.append(el('p', {}, el('a', { href: '#/graph' }, '← entity graph')),
    el('h2', { id: 'entity-name' }, card.entity.name), summary(card.entity),
    el('div', { class: 'columns' },
      el('div', {}, el('h3', {}, 'Evolution'), evolution(evolved),
        el('h3', {}, 'Neighbourhood '), depth, legend(), canvas, note),
      el('div', {}, el('h3', {}, 'Neighbours'), neighbours(card), el('h3', {}, 'Key relations'), relations(card))),
    el('h3', {}, 'Recent mentions'), cited(card.recent_mentions, 'recent-mentions'),
    el('h3', {}, `Memories naming it (${memories.memories.length}${memories.truncated ? '+' : ''}, past versions included)`),
    cited(memories.memories, 'entity-memories'));
  try { await drawNeighbourhood(canvas, note, id, 1); } catch (error) { note.textContent = `Could not draw it: ${error.message}`; }
}
