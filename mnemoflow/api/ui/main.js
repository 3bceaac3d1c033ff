// The dashboard's frame: the key (from `#key=...` or the form, kept in this tab only), the owner,
// the views by route, and the rule that any failure shows as a message, never a blank page.
import { ApiError, api, clearMessages, el, showMessage, state } from './lib.js';
import * as memories from './memories.js';
import * as graph from './graph.js';
import * as entity from './entity.js';
import * as review from './review.js';
import * as recall from './recall.js';
import * as runs from './runs.js';

const VIEWS = { memories, graph, review, recall, runs };
const KEY_ITEM = 'mnemoflow.key';
const OWNER_ITEM = 'mnemoflow.owner';
const LOGIN = document.getElementById('login'); // kept: a view replaces it in the page
let rendering = 0;

window.addEventListener('error', (event) => showMessage(`The page failed: ${event.message}`));
window.addEventListener('unhandledrejection', (event) => showMessage(`The page failed: ${event.reason && event.reason.message ? event.reason.message : event.reason}`));

/** A `#key=...&user=...&view=...` fragment fills the session, then leaves the address bar. */
function readFragment() {
  const fragment = window.location.hash.slice(1);
  if (!/(^|&)key=/.test(fragment)) return;
  const params = new URLSearchParams(fragment);
  sessionStorage.setItem(KEY_ITEM, params.get('key'));
  if (params.get('user')) sessionStorage.setItem(OWNER_ITEM, params.get('user'));
  const view = params.get('view') && VIEWS[params.get('view')] ? params.get('view') : 'memories';
  window.history.replaceState(null, '', `${window.location.pathname}#/${view}`);
}

function showLogin(reason) {
  state.key = null;
  document.getElementById('nav').hidden = true;
  document.getElementById('session').hidden = true;
  document.getElementById('view').replaceChildren(LOGIN);
  LOGIN.hidden = false;
  if (reason) showMessage(reason);
  document.getElementById('key').value = '';
  document.getElementById('key').focus();
}

async function signIn(key) {
  state.key = key;
  let owners;
  try {
    owners = await api('/v1/owners');
  } catch (error) {
    sessionStorage.removeItem(KEY_ITEM);
    showLogin(error instanceof ApiError && error.status === 401
      ? 'This key was refused: it is not a valid, unrevoked tenant API key.' : `Could not sign in: ${error.message}`);
    return false;
  }
  state.owners = owners;
  const list = document.getElementById('owner-list');
  list.replaceChildren(...Object.entries(owners).map(([user, n]) => el('option', { value: user }, `${n} memories`)));
  const remembered = sessionStorage.getItem(OWNER_ITEM);
  state.owner = remembered || Object.keys(owners)[0] || null;
  document.getElementById('owner').value = state.owner || '';
  const users = Object.keys(owners).length;
  document.getElementById('tenant-note').textContent = users
    ? `${users} user${users === 1 ? '' : 's'} in this tenant` : 'no memories in this tenant yet';
  clearMessages();
  LOGIN.hidden = true;
  document.getElementById('nav').hidden = false;
  document.getElementById('session').hidden = false;
  return true;
}

async function render() {
  if (!state.key) return;
  const ticket = ++rendering;
  const [, name = 'memories', ...rest] = window.location.hash.split('/');
  const route = name === 'entity' ? 'entity' : (VIEWS[name] ? name : 'memories');
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('active', link.dataset.view === (route === 'entity' ? 'graph' : route));
  }
  const root = el('section', { id: `view-${route}`, 'aria-busy': 'true' });
  document.getElementById('view').replaceChildren(root);
  if (!state.owner) {
    root.append(el('p', { class: 'empty' }, 'Name an owner (a user id) above: this tenant holds no memories yet.'));
    root.removeAttribute('aria-busy');
    return;
  }
  try {
    if (route === 'entity') await entity.render(root, decodeURIComponent(rest.join('/')));
    else await VIEWS[route].render(root);
  } catch (error) {
    if (ticket !== rendering) return;
    if (error instanceof ApiError && error.status === 401) {
      showLogin('The key was refused (revoked?): sign in again.');
      return;
    }
    showMessage(error.message);
    root.append(el('p', { class: 'empty' }, `Could not show this view: ${error.message}`));
  } finally {
    root.removeAttribute('aria-busy');
  }
}

async function start() {
  readFragment();
  document.getElementById('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = document.getElementById('key').value.trim();
    sessionStorage.setItem(KEY_ITEM, key);
    if (await signIn(key)) await render();
  });
  document.getElementById('sign-out').addEventListener('click', () => {
    sessionStorage.clear();
    clearMessages();
    showLogin();
  });
  document.getElementById('owner').addEventListener('change', async (event) => {
    const chosen = event.target.value.trim();
    if (!chosen || !event.target.checkValidity()) {
      showMessage('An owner is a user id: letters, digits and . _ : @ + - (starting with a letter or digit).');
      return;
    }
    state.owner = chosen;
    sessionStorage.setItem(OWNER_ITEM, chosen);
    await render();
  });
  window.addEventListener('hashchange', () => { clearMessages(); render(); });
  const key = sessionStorage.getItem(KEY_ITEM);
  if (!key) {
    showLogin();
    return;
  }
  if (await signIn(key)) await render();
}

start();
