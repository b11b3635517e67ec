// synapse-hub cockpit: read-only, no framework, no build step. Views are fetched filtered and
// paged from the hub; afterwards they change only through the live feed (a server-sent-events
// stream read with fetch, so the token travels in a header and never in a URL).
'use strict';

const LIMIT = 100;
const TOKEN_KEY = 'synapse-hub-cockpit-token';
const VIEWS = ['presence', 'claims', 'denials', 'board', 'messaging', 'feed', 'cluster'];

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  view: 'claims',
  skew: 0,              // hub time minus local time, seconds
  offsets: { presence: 0, claims: 0, cluster: 0 },
  filters: {},
  presence: null,       // last presence page
  claims: null,         // last claims page
  board: null,
  cluster: null,         // last cluster status: { panels: [...] }
  observed: null,        // last page of claims observed on federation peers
  denials: [],
  feed: [],
  stream: null,         // AbortController of the open stream
  streamGen: 0,
  loaded: {},
  timers: {},
  tickets: {},          // the latest request per view: an older answer arriving late is dropped
};

class AuthError extends Error {}

// ---------------------------------------------------------------- fetching

function headers() {
  return state.token ? { Authorization: 'Bearer ' + state.token } : {};
}

// a ticket for a new request of `view`; stale(view, t) is true once a newer one was asked
function ticket(view) {
  state.tickets[view] = (state.tickets[view] || 0) + 1;
  return state.tickets[view];
}

function stale(view, t) {
  return state.tickets[view] !== t;
}

async function api(view, params) {
  const qs = new URLSearchParams(params || {}).toString();
  const res = await fetch('/ui/api/' + view + (qs ? '?' + qs : ''), { headers: headers(), cache: 'no-store' });
  if (res.status === 401) {
    const body = await res.json().catch(() => ({}));
    throw new AuthError(body.message || 'token required');
  }
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    throw new Error(view + ': ' + res.status + ' ' + (body.message || ''));
  }
  const body = await res.json();
  if (body.staleness) showStaleness(body.staleness);
  return body;
}

// a mesh node answers from its own replica: every view says how fresh that is
function showStaleness(st) {
  const badge = document.getElementById('staleness');
  badge.hidden = false;
  badge.textContent = (st.isStale ? 'STALE ' : '') + 'node-local ' + st.source + ' · lag ' + st.replicationLagMs + ' ms'
    + (st.queueDepth ? ' · ' + st.queueDepth + ' queued' : '');
  badge.className = 'badge ' + (st.isStale ? 'stale' : 'fresh');
  badge.dataset.stale = st.isStale ? '1' : '0';
}

function hubNow() {
  return Date.now() / 1000 + state.skew;
}

function debounce(key, ms, fn) {
  clearTimeout(state.timers[key]);
  state.timers[key] = setTimeout(fn, ms);
}

// at most one run per `ms`, however many events ask (a debounce would starve under a busy feed)
function throttle(key, ms, fn) {
  if (state.timers[key]) return;
  state.timers[key] = setTimeout(() => { state.timers[key] = null; fn(); }, ms);
}

function status(text) {
  document.getElementById('status').textContent = text;
}

function failed(err) {
  if (err instanceof AuthError) {
    askForToken(state.token ? 'The hub refused that token (' + err.message + ').'
      : 'Enter the token the hub was started with (--token-file).');
    return;
  }
  status('error: ' + err.message);
}

// ---------------------------------------------------------------- small DOM helpers

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function cell(tr, text, cls) {
  const td = el('td', cls, text);
  tr.appendChild(td);
  return td;
}

function emptyRow(tbody, cols, text) {
  const tr = el('tr', 'empty');
  const td = cell(tr, text);
  td.colSpan = cols;
  tbody.appendChild(tr);
}

// Replaces the rows of table body `id` with row(item) for each item, or one `empty` row.
function fillRows(id, items, cols, empty, row) {
  const tbody = document.getElementById(id);
  tbody.textContent = '';
  if (items.length === 0) emptyRow(tbody, cols, empty);
  for (const item of items) tbody.appendChild(row(item));
}

function ago(ts) {
  if (ts === undefined || ts === null) return '–';
  const s = Math.max(0, Math.round(hubNow() - ts));
  if (s < 60) return s + 's ago';
  if (s < 3600) return Math.floor(s / 60) + 'm ago';
  return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm ago';
}

function countdown(expires) {
  const s = Math.floor(expires - hubNow());
  if (s <= 0) return 'expired';
  const m = Math.floor(s / 60);
  return m > 0 ? m + 'm ' + String(s % 60).padStart(2, '0') + 's' : s + 's';
}

function clock(ts) {
  return new Date(ts * 1000).toLocaleTimeString();
}

function matches(q, fields) {
  if (!q) return true;
  return fields.some((f) => f && String(f).toLowerCase().includes(q));
}

function pager(view, page, offsetKey) {
  const key = offsetKey || view;
  const box = document.querySelector('.pager[data-for="' + view + '"]');
  box.textContent = '';
  const first = page.matched === 0 ? 0 : page.offset + 1;
  const last = page.offset + page.rows.length;
  const info = el('span', 'page-info', first + '–' + last + ' of ' + page.matched
    + (page.matched !== page.total ? ' matching (' + page.total + ' in all)' : ''));
  info.id = view + '-page-info';
  const prev = el('button', null, '‹ prev');
  prev.disabled = page.offset === 0;
  prev.addEventListener('click', () => { state.offsets[key] = Math.max(0, page.offset - LIMIT); load(key); });
  const next = el('button', null, 'next ›');
  next.disabled = last >= page.matched;
  next.addEventListener('click', () => { state.offsets[key] = page.offset + LIMIT; load(key); });
  box.append(prev, info, next);
}

// ---------------------------------------------------------------- views

const loaders = {
  async presence() {
    const q = state.filters.presence || '';
    const online = document.getElementById('presence-online').checked;
    const t = ticket('presence');
    const p = await api('presence', { q, offset: state.offsets.presence, limit: LIMIT, online: online ? 1 : 0 });
    if (stale('presence', t)) return;
    state.presence = { total: p.total, matched: p.matched, offset: p.offset, rows: p.agents, online };
    renderPresence();
  },
  async claims() {
    const q = state.filters.claims || '';
    const t = ticket('claims');
    const p = await api('claims', { q, offset: state.offsets.claims, limit: LIMIT });
    if (stale('claims', t)) return;
    state.claims = { total: p.total, matched: p.matched, offset: p.offset, rows: p.claims };
    renderClaims();
  },
  async denials() {
    const t = ticket('denials');
    const p = await api('denials', { q: state.filters.denials || '', limit: 200 });
    if (stale('denials', t)) return;
    state.denials = p.denials;
    renderDenials();
  },
  async board() {
    const t = ticket('board');
    const b = await api('board', { q: state.filters.board || '', limit: LIMIT });
    if (stale('board', t)) return;
    state.board = b;
    renderBoard();
  },
  async messaging() {
    const t = ticket('messaging');
    const m = await api('messaging', { q: state.filters.messaging || '', limit: LIMIT });
    if (!stale('messaging', t)) renderMessaging(m);
  },
  async cluster() {
    const t = ticket('cluster');
    const c = await api('cluster');
    if (stale('cluster', t)) return;
    state.cluster = c;
    if (c.panels.some((p) => p.kind === 'federation')) await loadObserved();
    renderCluster();
  },
  async feed() {
    const t = ticket('feed');
    const p = await api('recent', { limit: 200 });
    if (stale('feed', t)) return;
    state.feed = p.changes.slice().reverse();
    renderFeed();
  },
};

async function loadObserved() {
  const t = ticket('observed');
  const p = await api('observed', { q: state.filters.cluster || '', offset: state.offsets.cluster, limit: LIMIT });
  if (stale('observed', t)) return;
  state.observed = { total: p.total, matched: p.matched, offset: p.offset, rows: p.claims };
}

async function load(view) {
  try {
    await loaders[view]();
    state.loaded[view] = true;
  } catch (err) {
    failed(err);
  }
}

async function loadOverview() {
  const o = await api('overview');
  state.skew = o.now - Date.now() / 1000;
  document.getElementById('hub-id').textContent = o.hub_id + ' · ' + o.hub_version;
  document.getElementById('stat-online').textContent = o.agents_online;
  document.getElementById('stat-claims').textContent = o.live_claims;
  document.getElementById('stat-tasks').textContent = o.board_tasks;
  document.getElementById('stat-backlog').textContent = o.mailbox_backlog;
  document.getElementById('stat-seq').textContent = o.feed.last_seq;
  document.getElementById('tab-cluster').hidden = !(o.cluster && o.cluster.length);
}

function renderPresence() {
  const p = state.presence;
  fillRows('presence-rows', p.rows, 4, 'no agents match', (a) => {
    const tr = el('tr');
    tr.dataset.agent = a.name;
    cell(tr, a.name);
    cell(tr, a.online ? 'online' : 'offline', a.online ? 'online' : 'offline');
    const seen = cell(tr, ago(a.last_seen), 'seen');
    if (a.last_seen !== undefined) seen.dataset.seen = a.last_seen;
    cell(tr, a.mailbox_pending, 'num');
    return tr;
  });
  pager('presence', p);
}

function claimRow(c) {
  const tr = el('tr');
  tr.dataset.task = c.task_id;
  cell(tr, c.task_id);
  cell(tr, c.owner);
  const scope = c.worktree + (c.paths.length ? ': ' + c.paths.join(', ') : ' (whole worktree)')
    + (c.paths_total > c.paths.length ? ' … +' + (c.paths_total - c.paths.length) : '');
  cell(tr, scope, 'scope');
  cell(tr, c.status);
  cell(tr, c.epoch, 'num epoch');
  cell(tr, c.version, 'num version');
  const lease = cell(tr, countdown(c.lease_expires_at), 'lease num');
  lease.dataset.expires = c.lease_expires_at;
  return tr;
}

function renderClaims(flashTask) {
  const p = state.claims;
  fillRows('claims-rows', p.rows, 7, 'no live claims match', (c) => {
    const tr = claimRow(c);
    if (c.task_id === flashTask) tr.classList.add('flash');
    return tr;
  });
  pager('claims', p);
  tickLeases();
}

function renderDenials() {
  const q = state.filters.denials || '';
  const rows = state.denials.filter((d) => matches(q, [d.claimant, d.reason]));
  fillRows('denials-rows', rows, 5, 'no denials since the hub started', (d) => {
    const tr = el('tr');
    cell(tr, clock(d.ts));
    cell(tr, d.claimant);
    cell(tr, d.reason);
    cell(tr, d.task_digest, 'scope');
    cell(tr, d.path_count, 'num');
    return tr;
  });
}

function renderBoard() {
  const b = state.board;
  const box = document.getElementById('board-columns');
  box.textContent = '';
  document.getElementById('board-summary').textContent = b.total + ' tasks, ' + b.ready + ' ready to start';
  for (const col of b.columns) {
    const c = el('div', 'column');
    c.dataset.status = col.status;
    c.appendChild(el('h3', null, col.status.replace('_', ' ') + ' · ' + col.matched));
    for (const t of col.tasks) {
      const card = el('div', 'card' + (t.ready ? ' ready' : ''));
      card.dataset.task = t.task_id;
      card.appendChild(el('div', 'id', t.task_id + (t.ready ? ' · ready' : '')));
      card.appendChild(el('div', 'title', t.title || '(untitled)'));
      if (t.depends_on.length) card.appendChild(el('div', 'deps', 'after ' + t.depends_on.join(', ')));
      if (t.suggested_owner) card.appendChild(el('div', 'deps', 'for ' + t.suggested_owner));
      c.appendChild(card);
    }
    if (col.matched > col.tasks.length) c.appendChild(el('div', 'muted', '… ' + (col.matched - col.tasks.length) + ' more'));
    box.appendChild(c);
  }
}

function renderMessaging(m) {
  fillRows('dead-rows', m.dead_letters, 4, 'no dead letters', (d) => {
    const tr = el('tr');
    tr.dataset.target = d.target;
    cell(tr, d.target);
    cell(tr, d.count, 'num');
    cell(tr, d.last_sender);
    cell(tr, ago(d.last_ts), 'seen').dataset.seen = d.last_ts;
    return tr;
  });
  fillRows('backlog-rows', m.backlogs, 2, 'every mailbox is drained', (b) => {
    const tr = el('tr');
    tr.dataset.identity = b.identity;
    cell(tr, b.identity);
    cell(tr, b.pending, 'num');
    return tr;
  });
}

function renderCluster() {
  const c = state.cluster;
  if (!c) return;
  const mesh = c.panels.find((p) => p.kind === 'mesh');
  const fed = c.panels.find((p) => p.kind === 'federation');
  document.getElementById('tab-cluster').hidden = c.panels.length === 0;
  document.getElementById('mesh-panel').hidden = !mesh;
  document.getElementById('federation-panel').hidden = !fed;
  if (mesh) renderMesh(mesh);
  if (fed) renderFederation(fed);
}

function fact(box, label, value, id) {
  const span = el('span', null, label + ' ');
  const b = el('b', null, value);
  if (id) b.id = id;
  span.appendChild(b);
  box.appendChild(span);
}

function renderMesh(m) {
  showStaleness(m.staleness);
  document.getElementById('mesh-node').textContent = m.node_id + ' (' + m.role.toLowerCase() + ')';
  const box = document.getElementById('mesh-facts');
  box.textContent = '';
  fact(box, 'leader', m.leader || 'none known', 'mesh-leader');
  fact(box, 'term', m.term, 'mesh-term');
  fact(box, 'commit index', m.commit_index, 'mesh-commit');
  fact(box, 'applied index', m.applied_index);
  fact(box, 'queue depth', m.queue_depth, 'mesh-queue');
  fact(box, 'last snapshot', m.last_snapshot_index < 0 ? 'none yet' : 'index ' + m.last_snapshot_index, 'mesh-snapshot');
  fact(box, 'reads', (m.staleness.isStale ? 'stale ' : '') + m.staleness.source + ', lag ' + m.staleness.replicationLagMs
    + ' ms', 'mesh-staleness');
  if (m.failure) fact(box, 'stopped deciding', m.failure);
  fillRows('mesh-rows', m.nodes, 4, 'no voters', (n) => {
    const tr = el('tr');
    tr.dataset.node = n.id;
    cell(tr, n.id + (n.self ? ' (this node)' : ''));
    cell(tr, n.address, 'scope');
    cell(tr, n.leader ? 'leader' : 'follower', n.leader ? 'ok' : null);
    cell(tr, n.lag_entries === null ? 'known on the leader' : n.lag_entries, 'num lag');
    return tr;
  });
}

function renderFederation(f) {
  document.getElementById('federation-hub').textContent = f.hub_id;
  fillRows('peer-rows', f.peers, 9, 'no watched peers', (p) => {
    const tr = el('tr');
    tr.dataset.peer = p.peer;
    cell(tr, p.peer);
    cell(tr, p.reachable ? 'yes' : 'no', p.reachable ? 'ok reachable' : 'bad reachable');
    cell(tr, p.cursor, 'num cursor');
    cell(tr, p.log_end_seq === null ? '–' : p.log_end_seq, 'num');
    cell(tr, p.lag, 'num lag');
    cell(tr, p.clock_skew_seconds === null ? '–' : p.clock_skew_seconds.toFixed(3) + ' s', 'num');
    cell(tr, p.quarantined ? 'yes: ' + p.quarantine : 'no', p.quarantined ? 'bad' : null);
    cell(tr, p.partitioned_namespaces.length ? 'contests ' + p.partitioned_namespaces.join(', ') : 'none',
      p.partitioned_namespaces.length ? 'bad' : null);
    cell(tr, p.last_error || '–', p.last_error ? 'bad error' : 'muted');
    return tr;
  });
  document.getElementById('partitions').textContent = f.partitions.length
    ? 'Partitioned: ' + f.partitions.map((p) => p.namespace + ' (contested by ' + p.contesting_hubs.join(', ') + ')')
      .join('; ') + '. Claims in these namespaces are refused until it clears.'
    : 'No partition: every namespace is asserted only by its owner.';
  const o = state.observed;
  if (!o) return;
  fillRows('observed-rows', o.rows, 7, 'no claims observed on peers', (c) => {
    const tr = el('tr');
    tr.dataset.task = c.task_id;
    tr.dataset.peer = c.observed_on;
    cell(tr, c.observed_on);
    cell(tr, c.task_id);
    cell(tr, c.owner);
    cell(tr, c.live ? c.status : c.status + ' (lease ran out)');
    cell(tr, c.epoch, 'num');
    const lease = cell(tr, countdown(c.lease_expires_at), 'lease num');
    lease.dataset.expires = c.lease_expires_at;
    cell(tr, c.seq, 'num');
    return tr;
  });
  pager('observed', { total: o.total, matched: o.matched, offset: o.offset, rows: o.rows }, 'cluster');
}

// a cluster status pushed by the hub: redraw it; re-read the observed page when a peer's log moved
function applyCluster(c) {
  const before = state.cluster;
  state.cluster = c;
  const cursors = (x) => (x ? x.panels.filter((p) => p.kind === 'federation')
    .flatMap((p) => p.peers.map((q) => q.peer + ':' + q.cursor + ':' + q.log_generation)).join(',') : '');
  if (cursors(before) !== cursors(c) && c.panels.some((p) => p.kind === 'federation')) {
    throttle('observed', 500, () => loadObserved().then(() => { if (state.view === 'cluster') renderCluster(); })
      .catch(failed));
  }
  if (state.view === 'cluster') renderCluster();
  else {
    const mesh = c.panels.find((p) => p.kind === 'mesh');
    if (mesh) showStaleness(mesh.staleness);
  }
}

function describe(ch) {
  switch (ch.kind) {
    case 'claim': case 'task_update': case 'checkpoint': case 'handoff':
      return ch.claim.task_id + ' → ' + ch.claim.owner + ' (epoch ' + ch.claim.epoch + ', v' + ch.claim.version + ', '
        + ch.claim.status + ')';
    case 'release': return ch.task_id;
    case 'claim_denial': return ch.denial.claimant + ': ' + ch.denial.reason;
    case 'ledger_task': return ch.task.task_id + ' ' + ch.task.status + (ch.task.title ? ' · ' + ch.task.title : '');
    case 'ledger_progress': return ch.task_id + ' ' + ch.note_kind + ' by ' + ch.author;
    case 'chat': return ch.sender + ' → ' + (ch.target || ch.channel || 'all') + (ch.dead_lettered ? ' (dead letter)' : '');
    case 'presence':
      return (ch.joined || []).map((a) => '+' + a.name).concat((ch.left || []).map((a) => '-' + a.name)).join(' ')
        + ' (' + ch.online + ' online)';
    default: return ch.target || ch.identity || '';
  }
}

function renderFeed() {
  const ol = document.getElementById('feed-rows');
  ol.textContent = '';
  const q = state.filters.feed || '';
  for (const ch of state.feed) {
    const text = describe(ch);
    if (!matches(q, [ch.kind, text])) continue;
    const li = el('li');
    li.dataset.kind = ch.kind;
    li.appendChild(el('span', 'muted', (ch.seq !== undefined ? '#' + ch.seq + ' ' : '') + (ch.ts ? clock(ch.ts) + ' ' : '')));
    li.appendChild(el('span', 'kind', ch.kind));
    li.appendChild(el('span', null, text));
    ol.appendChild(li);
  }
}

function tickLeases() {
  for (const td of document.querySelectorAll('td.lease[data-expires]')) {
    const left = Number(td.dataset.expires) - hubNow();
    td.textContent = countdown(Number(td.dataset.expires));
    td.classList.toggle('short', left > 0 && left < 60);
    td.classList.toggle('gone', left <= 0);
  }
  for (const td of document.querySelectorAll('td.seen[data-seen]')) {
    td.textContent = ago(Number(td.dataset.seen));
  }
}

// ---------------------------------------------------------------- the live feed

function applyChange(ch) {
  if (ch.baseline) { applyPresence(ch); return; } // the online count when the stream began, no change
  state.feed.unshift(ch);
  if (state.feed.length > 200) state.feed.pop();
  if (state.view === 'feed') renderFeed();
  if (ch.seq !== undefined) document.getElementById('stat-seq').textContent = ch.seq;
  switch (ch.kind) {
    case 'claim': case 'task_update': case 'checkpoint': case 'handoff': upsertClaim(ch.claim); break;
    case 'release': removeClaim(ch.task_id); break;
    case 'claim_denial':
      state.denials.unshift(ch.denial);
      if (state.denials.length > 200) state.denials.pop();
      if (state.view === 'denials') renderDenials();
      break;
    case 'ledger_task': upsertTask(ch.task); break;
    case 'chat': case 'dead_letter_escalation': case 'dead_letter_cleared': case 'mailbox_watermark': case 'ack':
      if (state.view === 'messaging') throttle('messaging', 500, () => load('messaging'));
      break;
    case 'presence': applyPresence(ch); break;
    default: break;
  }
  if (ch.kind !== 'presence') throttle('overview', 1000, () => loadOverview().catch(failed)); // counts only
}

function upsertClaim(c) {
  const p = state.claims;
  if (!p) return;
  const at = p.rows.findIndex((r) => r.task_id === c.task_id);
  const fits = matches(state.filters.claims || '', [c.task_id, c.owner, c.worktree].concat(c.paths));
  if (at >= 0) {
    if (fits) p.rows[at] = c; else { p.rows.splice(at, 1); p.matched--; }
  } else {
    if (!fits) return;
    // shown at once where it sorts into this page; the page's counts come back with a reload
    throttle('claims', 1000, () => load('claims'));
    const sorted = p.rows.length < LIMIT || c.task_id < p.rows[p.rows.length - 1].task_id;
    const before = p.offset === 0 || (p.rows.length > 0 && c.task_id > p.rows[0].task_id);
    if (sorted && before) {
      p.rows.push(c);
      p.matched++;
      p.total++;
      p.rows.sort((a, b) => (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0));
      if (p.rows.length > LIMIT) p.rows.pop();
    }
  }
  if (state.view === 'claims') renderClaims(c.task_id);
}

function removeClaim(taskId) {
  const p = state.claims;
  if (!p) return;
  const at = p.rows.findIndex((r) => r.task_id === taskId);
  if (at >= 0) {
    p.rows.splice(at, 1);
    p.matched--;
    p.total--;
    if (state.view === 'claims') renderClaims();
  }
}

function upsertTask(t) {
  const b = state.board;
  if (!b) return;
  let known = false;
  for (const col of b.columns) {
    const at = col.tasks.findIndex((x) => x.task_id === t.task_id);
    if (at >= 0) { col.tasks.splice(at, 1); col.matched--; known = true; }
  }
  if (!known) b.total++;
  if (matches(state.filters.board || '', [t.task_id, t.title, t.project, t.suggested_owner])) {
    const col = b.columns.find((c) => c.status === t.status);
    if (col) { col.tasks.push(t); col.tasks.sort((a, x) => (a.task_id < x.task_id ? -1 : 1)); col.matched++; }
  }
  // readiness depends on other tasks: ask the hub for this one small view again
  throttle('board', 500, () => load('board'));
  if (state.view === 'board') renderBoard();
}

function applyPresence(ch) {
  document.getElementById('stat-online').textContent = ch.online;
  const p = state.presence;
  if (!p) return;
  if (ch.resync) { throttle('presence', 500, () => load('presence')); return; }
  let unknown = false;
  const set = (list, online) => {
    for (const a of list || []) {
      const row = p.rows.find((r) => r.name === a.name);
      if (row) { row.online = online; if (a.last_seen !== undefined) row.last_seen = a.last_seen; } else unknown = true;
    }
  };
  set(ch.joined, true);
  set(ch.left, false);
  if (unknown) throttle('presence', 500, () => load('presence')); // a newcomer's place in the page
  else if (state.view === 'presence') renderPresence();
}

async function openStream() {
  if (state.stream) state.stream.abort();
  const ctrl = new AbortController();
  state.stream = ctrl;
  const gen = ++state.streamGen;
  const live = document.getElementById('live');
  try {
    const res = await fetch('/ui/api/events', { headers: headers(), signal: ctrl.signal, cache: 'no-store' });
    if (res.status === 401) throw new AuthError('token required');
    if (!res.ok || !res.body) throw new Error('event stream: ' + res.status);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (!data) continue;
        const payload = JSON.parse(data);
        if (event === 'hello') {
          state.skew = payload.now - Date.now() / 1000;
          live.textContent = 'live';
          live.className = 'badge on';
          await reloadAll();
        } else if (event === 'resync') {
          await reloadAll();
        } else if (event === 'cluster') {
          applyCluster(payload);
        } else {
          applyChange(payload);
        }
      }
    }
  } catch (err) {
    if (ctrl.signal.aborted) return;
    if (err instanceof AuthError) { failed(err); return; }
    status('live feed interrupted (' + err.message + '); reconnecting');
  }
  if (gen !== state.streamGen) return;
  live.textContent = 'offline';
  live.className = 'badge off';
  setTimeout(() => { if (gen === state.streamGen) openStream(); }, 3000);
}

async function reloadAll() {
  try {
    await loadOverview();
    await Promise.all(VIEWS.map((v) => loaders[v]()));
    VIEWS.forEach((v) => { state.loaded[v] = true; });
    status('');
  } catch (err) {
    failed(err);
  }
}

// ---------------------------------------------------------------- token and navigation

function askForToken(message) {
  if (state.stream) { state.stream.abort(); state.stream = null; }
  document.getElementById('auth-message').textContent = message
    + ' The cockpit sends it as an Authorization header, never in a URL.';
  document.getElementById('auth').hidden = false;
  document.getElementById('views').hidden = true;
  document.getElementById('auth-token').focus();
}

async function start() {
  try {
    await loadOverview(); // refused 401 on a token hub without the token
  } catch (err) {
    failed(err);
    return;
  }
  document.getElementById('auth').hidden = true;
  document.getElementById('views').hidden = false;
  openStream();
}

function show(view) {
  state.view = VIEWS.includes(view) ? view : 'claims';
  for (const v of VIEWS) document.getElementById('view-' + v).hidden = v !== state.view;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.view === state.view);
  const renderers = { presence: renderPresence, claims: renderClaims, denials: renderDenials, board: renderBoard,
    feed: renderFeed, cluster: renderCluster };
  if (state.view === 'messaging') load('messaging');
  else if (state[state.view] && renderers[state.view]) renderers[state.view]();
}

function wire() {
  document.getElementById('auth-form').addEventListener('submit', (e) => {
    e.preventDefault();
    state.token = document.getElementById('auth-token').value.trim();
    sessionStorage.setItem(TOKEN_KEY, state.token);
    start();
  });
  for (const view of VIEWS) {
    const input = document.getElementById('filter-' + view);
    input.addEventListener('input', () => debounce('filter-' + view, 250, () => {
      state.filters[view] = input.value.trim().toLowerCase();
      if (view in state.offsets) state.offsets[view] = 0;
      if (view === 'feed') renderFeed();
      else if (view === 'denials') renderDenials();
      else load(view);
    }));
  }
  document.getElementById('presence-online').addEventListener('change', () => {
    state.offsets.presence = 0;
    load('presence');
  });
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
  setInterval(tickLeases, 1000);
  show(location.hash.slice(1));
  start();
}

document.addEventListener('DOMContentLoaded', wire);
