// Recall as the agent sees it: a query and a token budget give the packed context, and each item
// with why it was chosen and what it cites.
import { api, citationList, el, empty, owner } from './lib.js';

function item(i) {
  return el('li', { class: 'recall-item' }, el('span', { class: 'badge' }, i.kind), el('span', {}, i.text),
    el('div', { class: 'meta' }, `${i.tokens} tokens · why: ${i.why}`),
    el('details', {}, el('summary', {}, `citations (${i.citations.length})`), citationList(i.citations)));
}

export async function render(root) {
  const out = el('div', { id: 'recall-result' }, empty('Ask something to see what the agent would be given.'));
  const form = el('form', { class: 'filters' },
    el('input', { type: 'search', name: 'query', required: true, placeholder: 'What does the agent ask?',
      'aria-label': 'recall query' }),
    el('label', {}, 'budget ', el('input', { type: 'number', name: 'budget', min: 16, max: 100000, value: 512,
      style: 'width:6rem' }), ' tokens'),
    el('label', {}, el('input', { type: 'checkbox', name: 'history' }), ' include past versions'),
    el('button', { type: 'submit', class: 'primary' }, 'Recall'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      const result = await api('/v1/recall', { method: 'POST', body: owner({ query: data.get('query'),
        token_budget: Number(data.get('budget')), include_history: data.get('history') === 'on' }) });
      out.replaceChildren(el('h3', {}, `Packed context (${result.tokens} tokens)`),
        result.context ? el('pre', { class: 'context', id: 'recall-context' }, result.context) : empty('Nothing recalled.'),
        result.warnings.map((w) => el('p', { class: 'note' }, `warning: ${w}`)),
        el('h3', {}, 'Items'), el('ol', { class: 'items' }, result.items.map(item)));
    } catch (error) {
      out.replaceChildren(empty(`Recall failed: ${error.message}`));
    }
  });
  root.append(el('h2', {}, 'Recall'), form, out);
}
