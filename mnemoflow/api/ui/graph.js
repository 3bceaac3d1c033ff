// The entity graph: force-directed (Cytoscape.js's cose layout), nodes coloured by type and sized by
// mentions, edges labelled by relation (co-mentions dashed, no longer current ones faded); filters by
// type and time; a click opens the entity's page. Beside it the entity list.
import { ENTITY_TYPES, api, dayBound, el, empty, entityLink, owner, select, when } from './lib.js';

export const COLOURS = { person: '#2f6fb3', organization: '#8e44ad', place: '#2e7d32', library: '#c0392b',
  tool: '#d35400', project: '#16a085', concept: '#7f8c8d' };

export function legend() {
  return el('div', { class: 'legend' }, ENTITY_TYPES.map((t) => el('span', { style: `--dot: ${COLOURS[t]}` }, t)),
    el('span', { class: 'note' }, 'size: mentions · dashed: named together · faded: no longer current'));
}

/** Draw `graph` (the API's Cytoscape elements) into `container`, `seed` outlined; a click on a node opens its page. */
export function drawGraph(container, graph, seed = null) {
  if (typeof window.cytoscape !== 'function') throw new Error('the graph library (vendor/cytoscape.min.js) did not load');
  const nodes = graph.elements.nodes;
  container.dataset.nodes = String(nodes.length);
  container.dataset.edges = String(graph.elements.edges.length);
  if (!nodes.length) {
    container.replaceChildren(empty('No entities to show for these filters.'));
    return null;
  }
  const most = Math.max(1, ...nodes.map((n) => n.data.mentions));
  const cy = window.cytoscape({
    container,
    elements: graph.elements,
    style: [
      { selector: 'node', style: {
        'background-color': (n) => COLOURS[n.data('type')] || '#555', label: 'data(label)', 'font-size': 11,
        color: '#1d2329', 'text-valign': 'bottom', 'text-margin-y': 4,
        width: (n) => 18 + 42 * Math.sqrt(n.data('mentions') / most),
        height: (n) => 18 + 42 * Math.sqrt(n.data('mentions') / most) } },
      { selector: 'edge', style: {
        width: (e) => 1 + Math.min(5, e.data('weight')), 'line-color': '#9aa5b1', 'curve-style': 'bezier',
        label: 'data(label)', 'font-size': 9, color: '#4a545e', 'text-rotation': 'autorotate',
        'target-arrow-shape': 'triangle', 'target-arrow-color': '#9aa5b1' } },
      { selector: 'edge[kind = "co-mention"]', style: { 'line-style': 'dashed', 'target-arrow-shape': 'none',
        label: '' } },
      { selector: 'edge[!current]', style: { opacity: 0.35 } },
    ],
    layout: { name: 'cose', animate: false, randomize: false, nodeRepulsion: () => 9000, idealEdgeLength: () => 90 },
  });
  if (seed) cy.getElementById(seed).style({ 'border-width': 3, 'border-color': '#1d2329' });
  cy.on('tap', 'node', (event) => { window.location.hash = `#/entity/${encodeURIComponent(event.target.id())}`; });
  container.dataset.drawn = 'true';
  return cy;
}

function entityTable(entities) {
  if (!entities.length) return empty('No entities.');
  return el('table', { id: 'entity-list' },
    el('thead', {}, el('tr', {}, ['entity', 'type', 'mentions (current)', 'hotness', 'last seen'].map((h) => el('th', {}, h)))),
    el('tbody', {}, entities.map((e) => el('tr', {}, el('td', {}, entityLink(e)), el('td', {}, e.type),
      el('td', {}, `${e.mention_count} (${e.current_mentions})`), el('td', {}, e.hotness.toFixed(2)),
      el('td', {}, when(e.last_seen).slice(0, 10))))));
}

export async function render(root) {
  const canvas = el('div', { class: 'graph', id: 'graph' });
  const side = el('div', {});
  const note = el('p', { class: 'note' });
  const form = el('form', { class: 'filters' },
    select('type', 'type', ENTITY_TYPES),
    el('label', {}, 'said from ', el('input', { type: 'date', name: 'since' })),
    el('label', {}, 'to ', el('input', { type: 'date', name: 'until' })),
    el('label', {}, 'at most ', el('input', { type: 'number', name: 'max_nodes', min: 1, value: 80, style: 'width:5rem' }),
      ' entities'),
    el('input', { type: 'search', name: 'q', placeholder: 'entity name…', 'aria-label': 'entity name' }),
    el('button', { type: 'submit', class: 'primary' }, 'Show'));
  async function refresh() {
    const data = new FormData(form);
    const narrowed = { type: data.get('type'), since: dayBound(data.get('since')), until: dayBound(data.get('until'), true) };
    const [graph, list] = await Promise.all([
      api('/v1/graph', { params: owner({ ...narrowed, max_nodes: data.get('max_nodes') }) }),
      api('/v1/entities', { params: owner({ ...narrowed, q: data.get('q'), limit: 200 }) })]);
    canvas.replaceChildren();
    drawGraph(canvas, graph);
    note.textContent = `${graph.elements.nodes.length} entities, ${graph.elements.edges.length} edges`
      + (graph.note ? ` (${graph.note})` : '');
    side.replaceChildren(el('h3', {}, 'Entities'), entityTable(list.entities));
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try { await refresh(); } catch (error) { canvas.replaceChildren(empty(`Could not load the graph: ${error.message}`)); }
  });
  root.append(el('h2', {}, 'Entity graph'), form, legend(),
    el('div', { class: 'columns' }, el('div', {}, canvas, note), side));
  await refresh();
}
