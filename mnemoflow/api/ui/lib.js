// What every view shares: the session (key and owner), API calls whose failures become messages,
// DOM building that never interprets data as HTML, and how times and citations read.

export const state = { key: null, owner: null, owners: {} };

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** An element with attributes (`on*` handlers, `text`, `dataset`) and children (nodes or strings, as text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name === 'text') node.textContent = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function detailOf(body, fallback) {
  if (body && typeof body.detail === 'string') return body.detail;
  if (body && Array.isArray(body.detail)) {
    return body.detail.map((d) => `${(d.loc || []).slice(1).join('.') || 'request'}: ${d.msg}`).join('; ');
  }
  return fallback;
}

/** A call of the tenant API with the session's key; a refusal throws ApiError with the server's words. */
export async function api(path, { method = 'GET', params = {}, body, text = false } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { Authorization: `Bearer ${state.key}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, `the server did not answer (${error.message})`);
  }
  if (!response.ok) {
    let payload = null;
    try { payload = await response.json(); } catch { /* not JSON: the status says it */ }
    throw new ApiError(response.status, `${response.status}: ${detailOf(payload, response.statusText || 'refused')}`);
  }
  return text ? response.text() : response.json();
}

/** A message above the view: errors stay until dismissed, notes fade. */
export function showMessage(text, kind = 'error') {
  const box = document.getElementById('messages');
  const item = el('div', { class: `message ${kind}` }, el('span', { text }),
    el('button', { type: 'button', 'aria-label': 'dismiss', onclick: () => item.remove() }, '×'));
  box.append(item);
  if (kind !== 'error') setTimeout(() => item.remove(), 6000);
  return item;
}

export function clearMessages() {
  document.getElementById('messages').replaceChildren();
}

/** The owner every tenant call names. */
export function owner(params = {}) {
  return { user_id: state.owner, ...params };
}

export function when(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 16).replace('T', ' ');
}

/** A date input's day as the start of that day (UTC), or the start of the next one (`end`). */
export function dayBound(value, end = false) {
  if (!value) return null;
  const day = new Date(`${value}T00:00:00Z`);
  if (end) day.setUTCDate(day.getUTCDate() + 1);
  return day.toISOString();
}

export function citationText(c) {
  if (c.turn_id) {
    const who = c.speaker ? ` ${c.speaker}` : '';
    return `${c.session_id || 'conversation'} #${c.turn_id}${who}${c.ts ? ` @ ${when(c.ts)}` : ''}`;
  }
  if (c.document_id || c.uri) return `${c.title || c.uri || c.document_id}${c.locator && c.locator.page ? ` p. ${c.locator.page}` : ''}`;
  return c.memory_id ? `memory ${c.memory_id}${c.ts ? ` @ ${when(c.ts)}` : ''}` : 'no source recorded';
}

export function citationList(citations) {
  if (!citations || !citations.length) return el('p', { class: 'note' }, 'No citation recorded.');
  return el('ul', { class: 'citations' }, citations.map((c) => el('li', {}, citationText(c))));
}

export function entityLink(entity) {
  return el('a', { class: 'entity', href: `#/entity/${encodeURIComponent(entity.entity_id)}` }, entity.name);
}

export function empty(text) {
  return el('p', { class: 'empty' }, text);
}

export const ENTITY_TYPES = ['person', 'organization', 'place', 'library', 'tool', 'project', 'concept'];
export const MEMORY_KINDS = ['fact', 'preference', 'episode', 'procedure', 'rule'];

export function select(name, label, options, chosen = '') {
  return el('label', {}, `${label} `, el('select', { name },
    el('option', { value: '' }, 'any'),
    options.map((o) => el('option', { value: o, selected: o === chosen }, o))));
}
