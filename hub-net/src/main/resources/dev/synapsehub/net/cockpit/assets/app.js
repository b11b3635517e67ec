// synapse-hub cockpit: read-only, no framework, no build step. Views are fetched filtered and
// paged from the hub; afterwards they change only through the live feed (a server-sent-events
// stream read with fetch, so the token travels in a header and never in a URL). Every list that
// can grow long is virtualised: only the rows in view are in the page, fetched as it scrolls.
'use strict';

const TOKEN_KEY = 'synapse-hub-cockpit-token';
const VIEWS = ['presence', 'claims', 'denials', 'board', 'messaging', 'cards', 'feed', 'cluster'];
const COLUMNS = ['open', 'in_progress', 'blocked', 'done', 'cancelled'];

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  view: 'claims',
  skew: 0,              // hub time minus local time, seconds
  filters: {},
  cluster: null,         // last cluster status: { panels: [...] }
  denials: [],
  feed: [],
  board: { total: 0, ready: 0 },
  stream: null,         // AbortController of the open stream
  streamGen: 0,
  timers: {},
  tickets: {},          // the latest request per view: an older answer arriving late is dropped
  ready: false,         // the hub answered with this token: views may be fetched
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

// ---------------------------------------------------------------- virtualised lists

// A list that may hold 100,000 rows keeps in the page only the rows in view plus OVERSCAN on
// each side, between two spacers that give the scrollbar the whole list's height. Rows come from
// source(offset, limit) in blocks of BLOCK, filtered and counted by the hub; at most MAX_BLOCKS
// blocks are kept, so a long scroll does not pile rows up in memory either.
const BLOCK = 200;
const OVERSCAN = 6;
const MAX_BLOCKS = 6;

class VirtualList {
  // opts: scroller, body (element ids); cols (a table's column count, 0 for a list of divs or
  // items); spacer ('tr', 'div' or 'li'); empty (text); row(item) -> element; key(item);
  // order(a, b) (the hub's sort, for a row inserted live); source(offset, limit) ->
  // Promise<{ total, matched, rows }>; counted(list) (after each answer); rowHeight (estimate)
  constructor(name, opts) {
    this.name = name;
    this.o = opts;
    this.scroller = document.getElementById(opts.scroller);
    this.body = document.getElementById(opts.body);
    this.rowH = opts.rowHeight || 33;
    this.measured = false;
    this.blocks = new Map();   // block index -> { gen, rows }
    this.asked = new Map();    // block index -> generation it was last asked in
    this.gen = 0;
    this.total = 0;
    this.matched = 0;
    this.known = false;        // an answer arrived since the last reset
    this.framed = false;
    this.flash = null;
    this.scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
  }

  // forgets every row (a new filter) and asks for the first rows
  reset() {
    this.gen++;
    this.blocks.clear();
    this.asked.clear();
    this.known = false;
    this.scroller.scrollTop = 0;
    return this.fill();
  }

  // asks the hub again for the rows in view (the state moved), showing the old ones meanwhile
  refresh() {
    this.gen++;
    return this.fill();
  }

  schedule() {
    if (this.framed) return;
    this.framed = true;
    requestAnimationFrame(() => { this.framed = false; this.fill().catch(failed); });
  }

  // the rows drawn: those in view and OVERSCAN on each side (a hidden list draws a window's worth)
  range() {
    const view = this.scroller.clientHeight || window.innerHeight;
    const first = Math.max(0, Math.floor(this.scroller.scrollTop / this.rowH) - OVERSCAN);
    const count = Math.ceil(Math.max(view, 1) / this.rowH) + 2 * OVERSCAN;
    return { first, last: this.known ? Math.min(this.matched, first + count) : first + count };
  }

  fill() {
    const { first, last } = this.range();
    const asks = [];
    for (let b = Math.floor(first / BLOCK); b <= Math.floor(Math.max(first, last - 1) / BLOCK); b++) {
      const have = this.blocks.get(b);
      if ((!have || have.gen !== this.gen) && this.asked.get(b) !== this.gen) asks.push(this.fetch(b));
    }
    this.draw();
    return Promise.all(asks);
  }

  async fetch(b) {
    const gen = this.gen;
    this.asked.set(b, gen);
    let page;
    try {
      page = await this.o.source(b * BLOCK, BLOCK);
    } catch (err) {
      if (this.asked.get(b) === gen) this.asked.delete(b);
      if (err instanceof AuthError) throw err;
      // a busy writer (503) or a dropped connection: say so and ask again shortly
      status(err.message + '; asking again');
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.fill().catch(failed), 2000);
      return;
    }
    if (gen !== this.gen) return; // a newer question is on its way
    this.total = page.total;
    this.matched = page.matched;
    this.known = true;
    this.blocks.set(b, { gen, rows: page.rows });
    while (this.blocks.size > MAX_BLOCKS) { // the farthest block goes first
      const far = [...this.blocks.keys()].sort((x, y) => Math.abs(y - b) - Math.abs(x - b))[0];
      this.blocks.delete(far);
      this.asked.delete(far);
    }
    if (this.o.counted) this.o.counted(this);
    await this.fill(); // the count may have moved the window onto blocks not asked yet
  }

  at(i) {
    const have = this.blocks.get(Math.floor(i / BLOCK));
    return have ? have.rows[i % BLOCK] : undefined;
  }

  spacer(px) {
    const s = el(this.o.spacer || 'tr', 'spacer');
    if (this.o.cols) {
      const td = el('td');
      td.colSpan = this.o.cols;
      s.appendChild(td);
    }
    s.style.height = px + 'px';
    return s;
  }

  draw() {
    const body = this.body;
    const { first, last } = this.range();
    body.textContent = '';
    if (this.known && this.matched === 0) {
      if (this.o.cols) emptyRow(body, this.o.cols, this.o.empty);
      else body.appendChild(el(this.o.spacer || 'div', 'empty', this.o.empty));
    } else {
      body.appendChild(this.spacer(first * this.rowH));
      for (let i = first; i < last; i++) {
        const item = this.at(i);
        let node;
        if (item === undefined) {
          node = el(this.o.spacer || 'tr', 'loading');
          if (this.o.cols) { const td = cell(node, '…'); td.colSpan = this.o.cols; }
          node.style.height = this.rowH + 'px';
        } else {
          node = this.o.row(item);
          node.classList.add('vrow');
          if (this.flash !== null && this.o.key(item) === this.flash) node.classList.add('flash');
        }
        body.appendChild(node);
      }
      body.appendChild(this.spacer(Math.max(0, (this.known ? this.matched : last) - last) * this.rowH));
    }
    this.flash = null;
    this.measure();
    this.info();
    tickLeases();
  }

  // the real height of a row, taken once from two drawn rows (CSS fixes it; fonts may differ)
  measure() {
    if (this.measured) return;
    const rows = this.body.querySelectorAll('.vrow');
    if (rows.length < 2 || rows[0].offsetHeight === 0) return;
    const h = rows[1].offsetTop - rows[0].offsetTop;
    this.measured = true;
    if (h > 0 && Math.abs(h - this.rowH) >= 1) { this.rowH = h; this.draw(); }
  }

  // "first–last of matched": the rows in view, as a reader counts them
  info() {
    const box = document.getElementById(this.name + '-page-info');
    if (!box) return;
    const h = this.scroller.clientHeight || window.innerHeight;
    const top = this.scroller.scrollTop;
    const head = this.o.cols ? (this.scroller.querySelector('thead') || { offsetHeight: 0 }).offsetHeight : 0;
    const first = this.matched === 0 ? 0 : Math.min(this.matched, Math.floor(top / this.rowH) + 1);
    const last = Math.min(this.matched, Math.max(first, Math.floor((top + h - head) / this.rowH)));
    box.textContent = first + '–' + last + ' of ' + this.matched
      + (this.matched !== this.total ? ' matching (' + this.total + ' in all)' : '');
  }

  find(key) {
    for (const [b, have] of this.blocks) {
      const at = have.rows.findIndex((r) => this.o.key(r) === key);
      if (at >= 0) return { b, at, rows: have.rows };
    }
    return null;
  }

  // a row that changed in place: redrawn at once (it flashes)
  update(item) {
    const hit = this.find(this.o.key(item));
    if (!hit) return false;
    hit.rows[hit.at] = item;
    this.flash = this.o.key(item);
    this.draw();
    return true;
  }

  // a row that is gone: dropped at once; the hub's view follows shortly
  remove(key) {
    const hit = this.find(key);
    if (hit) {
      hit.rows.splice(hit.at, 1);
      this.matched = Math.max(0, this.matched - 1);
      this.total = Math.max(0, this.total - 1);
      this.draw();
    }
    throttle('refresh-' + this.name, 500, () => this.refresh().catch(failed));
    return hit !== null;
  }

  // a new row: shown at once where it sorts into a block held now; the hub's view follows
  insert(item) {
    const order = this.o.order;
    for (const [b, have] of [...this.blocks].sort((x, y) => x[0] - y[0])) {
      const rows = have.rows;
      // only where the row surely belongs: past the block's first row (or in the first block)
      if (b > 0 && (rows.length === 0 || order(item, rows[0]) < 0)) continue;
      if (rows.length >= BLOCK && order(item, rows[rows.length - 1]) > 0) continue;
      let at = rows.findIndex((r) => order(item, r) < 0);
      if (at < 0) at = rows.length;
      rows.splice(at, 0, item);
      this.matched++;
      this.total++;
      this.flash = this.o.key(item);
      this.draw();
      break;
    }
    throttle('refresh-' + this.name, 500, () => this.refresh().catch(failed));
  }
}

// a list over rows the page holds itself (the feed, the denials): filtered here
function localSource(items, fits) {
  return (offset, limit) => {
    const all = items();
    const kept = all.filter(fits);
    return Promise.resolve({ total: all.length, matched: kept.length, rows: kept.slice(offset, offset + limit) });
  };
}

function byKey(key) {
  return (a, b) => { const x = key(a); const y = key(b); return x < y ? -1 : x > y ? 1 : 0; };
}

// ---------------------------------------------------------------- views

const lists = {};

// a page of view `view` from the hub as a list source: { total, matched, rows: body[field] } (a late
// answer to an older question is dropped by the list itself)
function hubSource(view, field, params, counts) {
  return async (offset, limit) => {
    const p = await api(view, Object.assign({ offset, limit }, params()));
    const c = counts ? counts(p) : p;
    return { total: c.total, matched: c.matched, rows: p[field] };
  };
}

function presenceRow(a) {
  const tr = el('tr');
  tr.dataset.agent = a.name;
  cell(tr, a.name);
  cell(tr, a.online ? 'online' : 'offline', a.online ? 'online' : 'offline');
  const seen = cell(tr, ago(a.last_seen), 'seen');
  if (a.last_seen !== undefined) seen.dataset.seen = a.last_seen;
  cell(tr, a.mailbox_pending, 'num');
  return tr;
}

function claimRow(c) {
  const tr = el('tr');
  tr.dataset.task = c.task_id;
  cell(tr, c.task_id);
  cell(tr, c.owner);
  const scope = c.worktree + (c.paths.length ? ': ' + c.paths.join(', ') : ' (whole worktree)')
    + (c.paths_total > c.paths.length ? ' … +' + (c.paths_total - c.paths.length) : '');
  cell(tr, scope, 'scope').title = scope;
  cell(tr, c.status);
  cell(tr, c.epoch, 'num epoch');
  cell(tr, c.version, 'num version');
  const lease = cell(tr, countdown(c.lease_expires_at), 'lease num');
  lease.dataset.expires = c.lease_expires_at;
  return tr;
}

function denialRow(d) {
  const tr = el('tr');
  cell(tr, clock(d.ts));
  cell(tr, d.claimant);
  cell(tr, d.reason);
  cell(tr, d.task_digest, 'scope');
  cell(tr, d.path_count, 'num');
  return tr;
}

function taskCard(t) {
  const card = el('div', 'card' + (t.ready ? ' ready' : ''));
  card.dataset.task = t.task_id;
  card.appendChild(el('div', 'id', t.task_id + (t.ready ? ' · ready' : '')));
  card.appendChild(el('div', 'title', t.title || '(untitled)'));
  card.appendChild(el('div', 'deps', t.depends_on.length ? 'after ' + t.depends_on.join(', ') : ' '));
  card.appendChild(el('div', 'deps', t.suggested_owner ? 'for ' + t.suggested_owner : ' '));
  card.title = t.task_id + (t.title ? ': ' + t.title : '');
  return card;
}

function deadRow(d) {
  const tr = el('tr');
  tr.dataset.target = d.target;
  cell(tr, d.target);
  cell(tr, d.count, 'num');
  cell(tr, d.last_sender);
  cell(tr, ago(d.last_ts), 'seen').dataset.seen = d.last_ts;
  return tr;
}

function backlogRow(b) {
  const tr = el('tr');
  tr.dataset.identity = b.identity;
  cell(tr, b.identity);
  cell(tr, b.pending, 'num');
  return tr;
}

function cardRow(c) {
  const tr = el('tr');
  tr.dataset.agent = c.agent;
  cell(tr, c.agent);
  cell(tr, c.description || '–');
  cell(tr, (c.skills || []).join(', ') || '–', 'scope');
  cell(tr, c.model || '–');
  const v = c.signature_status === 'missing_signature' ? 'unsigned' : c.signature_status;
  cell(tr, v, v === 'valid' ? 'ok signature' : 'muted signature');
  cell(tr, c.dispatchable === false ? 'no' : 'yes');
  cell(tr, ago(c.registered_at), 'seen').dataset.seen = c.registered_at;
  return tr;
}

function observedRow(c) {
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
}

function feedRow(ch) {
  const li = el('li');
  li.dataset.kind = ch.kind;
  li.appendChild(el('span', 'muted', (ch.seq !== undefined ? '#' + ch.seq + ' ' : '') + (ch.ts ? clock(ch.ts) + ' ' : '')));
  li.appendChild(el('span', 'kind', ch.kind));
  li.appendChild(el('span', null, describe(ch)));
  return li;
}

function makeLists() {
  const filter = (v) => state.filters[v] || '';
  lists.presence = new VirtualList('presence', {
    scroller: 'presence-scroll', body: 'presence-rows', cols: 4, empty: 'no agents match', row: presenceRow,
    key: (a) => a.name, order: byKey((a) => a.name),
    source: hubSource('presence', 'agents', () => ({ q: filter('presence'),
      online: document.getElementById('presence-online').checked ? 1 : 0 })),
  });
  lists.claims = new VirtualList('claims', {
    scroller: 'claims-scroll', body: 'claims-rows', cols: 7, empty: 'no live claims match', row: claimRow,
    key: (c) => c.task_id, order: byKey((c) => c.task_id),
    source: hubSource('claims', 'claims', () => ({ q: filter('claims') })),
  });
  lists.denials = new VirtualList('denials', {
    scroller: 'denials-scroll', body: 'denials-rows', cols: 5, empty: 'no denials since the hub started',
    row: denialRow, key: (d) => d.ts + d.claimant, order: () => -1,
    source: localSource(() => state.denials, (d) => matches(filter('denials'), [d.claimant, d.reason])),
  });
  for (const status of COLUMNS) {
    lists['board-' + status] = new VirtualList('board-' + status, {
      scroller: 'board-' + status + '-scroll', body: 'board-' + status + '-cards', cols: 0, spacer: 'div',
      empty: 'no tasks', row: taskCard, key: (t) => t.task_id, order: byKey((t) => t.task_id), rowHeight: 82,
      source: boardSource(status),
      counted: (list) => {
        document.getElementById('board-' + status + '-count').textContent = list.matched;
      },
    });
  }
  lists.dead = new VirtualList('dead', {
    scroller: 'dead-scroll', body: 'dead-rows', cols: 4, empty: 'no dead letters', row: deadRow,
    key: (d) => d.target, order: () => 1,
    source: hubSource('messaging', 'dead_letters', () => ({ q: filter('messaging') }),
      (p) => ({ total: p.dead_letters_total, matched: p.dead_letters_matched })),
  });
  lists.backlogs = new VirtualList('backlogs', {
    scroller: 'backlog-scroll', body: 'backlog-rows', cols: 2, empty: 'every mailbox is drained', row: backlogRow,
    key: (b) => b.identity, order: () => 1,
    source: hubSource('messaging', 'backlogs', () => ({ q: filter('messaging') }),
      (p) => ({ total: p.backlogs_total, matched: p.backlogs_matched })),
  });
  lists.cards = new VirtualList('cards', {
    scroller: 'cards-scroll', body: 'cards-rows', cols: 7, empty: 'no capability cards', row: cardRow,
    key: (c) => c.agent, order: byKey((c) => c.agent),
    source: hubSource('cards', 'cards', () => ({ q: filter('cards') })),
  });
  lists.feed = new VirtualList('feed', {
    scroller: 'feed-scroll', body: 'feed-rows', cols: 0, spacer: 'li', empty: 'no changes yet', row: feedRow,
    key: (ch) => ch.seq + ':' + ch.kind, order: () => -1, rowHeight: 27,
    source: localSource(() => state.feed, (ch) => matches(filter('feed'), [ch.kind, describe(ch)])),
  });
  lists.observed = new VirtualList('observed', {
    scroller: 'observed-scroll', body: 'observed-rows', cols: 7, empty: 'no claims observed on peers',
    row: observedRow, key: (c) => c.observed_on + '/' + c.task_id, order: () => 1,
    source: hubSource('observed', 'claims', () => ({ q: filter('cluster') })),
  });
}

function boardSource(status) {
  return async (offset, limit) => {
    const b = await api('board', { q: state.filters.board || '', status, offset, limit });
    state.board = { total: b.total, ready: b.ready };
    document.getElementById('board-summary').textContent = b.total + ' tasks, ' + b.ready + ' ready to start';
    const col = b.columns.find((c) => c.status === status);
    return { total: b.total, matched: col ? col.matched : 0, rows: col ? col.tasks : [] };
  };
}

// the lists each view shows
const VIEW_LISTS = {
  presence: ['presence'], claims: ['claims'], denials: ['denials'],
  board: COLUMNS.map((s) => 'board-' + s), messaging: ['dead', 'backlogs'], cards: ['cards'], feed: ['feed'],
  cluster: ['observed'],
};

const loaders = {
  async presence() { await lists.presence.refresh(); },
  async claims() { await lists.claims.refresh(); },
  async denials() {
    const t = ticket('denials');
    const p = await api('denials', { limit: 200 });
    if (stale('denials', t)) return;
    state.denials = p.denials;
    await lists.denials.refresh();
  },
  async board() { await Promise.all(VIEW_LISTS.board.map((n) => lists[n].refresh())); },
  async messaging() { await Promise.all([lists.dead.refresh(), lists.backlogs.refresh()]); },
  async cards() { await lists.cards.refresh(); },
  async cluster() {
    const t = ticket('cluster');
    const c = await api('cluster');
    if (stale('cluster', t)) return;
    state.cluster = c;
    renderCluster();
    if (c.panels.some((p) => p.kind === 'federation')) await lists.observed.refresh();
  },
  async feed() {
    const t = ticket('feed');
    const p = await api('recent', { limit: 200 });
    if (stale('feed', t)) return;
    state.feed = p.changes.slice().reverse();
    await lists.feed.refresh();
  },
};

async function load(view) {
  try {
    await loaders[view]();
  } catch (err) {
    failed(err);
  }
}

// a filter changed: its lists start again from the top
function refilter(view) {
  return Promise.all(VIEW_LISTS[view].map((n) => lists[n].reset())).catch(failed);
}

async function loadOverview() {
  const o = await api('overview');
  state.skew = o.now - Date.now() / 1000;
  document.getElementById('hub-id').textContent = o.hub_id + ' · ' + o.hub_version;
  document.getElementById('stat-online').textContent = o.agents_online;
  document.getElementById('stat-claims').textContent = o.live_claims;
  document.getElementById('stat-tasks').textContent = o.board_tasks;
  // null: a hub without a journal has no mailbox
  document.getElementById('stat-backlog').textContent = o.mailbox_backlog ?? 'no journal';
  document.getElementById('stat-seq').textContent = o.feed.last_seq;
  document.getElementById('tab-cluster').hidden = !(o.cluster && o.cluster.length);
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
}

// a cluster status pushed by the hub: redraw it; re-read the observed claims when a peer's log moved
function applyCluster(c) {
  const before = state.cluster;
  state.cluster = c;
  const cursors = (x) => (x ? x.panels.filter((p) => p.kind === 'federation')
    .flatMap((p) => p.peers.map((q) => q.peer + ':' + q.cursor + ':' + q.log_generation)).join(',') : '');
  if (cursors(before) !== cursors(c) && c.panels.some((p) => p.kind === 'federation')) {
    throttle('observed', 500, () => lists.observed.refresh().catch(failed));
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
    case 'capability_card': return ch.agent + ' registered a persistent card';
    case 'capability_card_removed': return ch.agent + ' removed its persistent card';
    default: return ch.target || ch.identity || ch.agent || '';
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
  throttle('feed', 250, () => lists.feed.refresh().catch(failed)); // a busy feed redraws at most 4 times a second
  if (ch.seq !== undefined) document.getElementById('stat-seq').textContent = ch.seq;
  switch (ch.kind) {
    case 'claim': case 'task_update': case 'checkpoint': case 'handoff': upsertClaim(ch.claim); break;
    case 'release': lists.claims.remove(ch.task_id); break;
    case 'claim_denial':
      state.denials.unshift(ch.denial);
      if (state.denials.length > 200) state.denials.pop();
      throttle('denials', 250, () => lists.denials.refresh().catch(failed));
      break;
    case 'ledger_task': upsertTask(ch.task); break;
    case 'chat': case 'dead_letter_escalation': case 'dead_letter_cleared': case 'mailbox_watermark': case 'ack':
      if (state.view === 'messaging') throttle('messaging', 500, () => load('messaging'));
      break;
    case 'capability_card': upsertCard(ch.card); break;
    case 'capability_card_removed': lists.cards.remove(ch.agent); break;
    case 'presence': applyPresence(ch); break;
    default: break;
  }
  if (ch.kind !== 'presence') throttle('overview', 1000, () => loadOverview().catch(failed)); // counts only
}

function upsertClaim(c) {
  const fits = matches(state.filters.claims || '', [c.task_id, c.owner, c.worktree].concat(c.paths));
  if (!fits) { if (lists.claims.find(c.task_id)) lists.claims.remove(c.task_id); return; }
  if (!lists.claims.update(c)) lists.claims.insert(c);
}

function upsertCard(c) {
  if (!c) return;
  const fits = matches(state.filters.cards || '', [c.agent, c.description, c.model].concat(c.skills || []));
  if (!fits) return;
  if (!lists.cards.update(c)) lists.cards.insert(c);
}

function upsertTask(t) {
  for (const s of COLUMNS) {
    const list = lists['board-' + s];
    const hit = list.find(t.task_id);
    if (hit && s !== t.status) list.remove(t.task_id);
    else if (hit) list.update(t);
  }
  const col = lists['board-' + t.status];
  if (col && !col.find(t.task_id)
    && matches(state.filters.board || '', [t.task_id, t.title, t.project, t.suggested_owner])) col.insert(t);
  // readiness depends on other tasks: the hub's columns follow shortly
  throttle('board', 500, () => load('board'));
}

function applyPresence(ch) {
  document.getElementById('stat-online').textContent = ch.online;
  const list = lists.presence;
  if (ch.resync) { throttle('presence', 500, () => load('presence')); return; }
  let unknown = false;
  const set = (names, online) => {
    for (const a of names || []) {
      const hit = list.find(a.name);
      if (hit) {
        const row = Object.assign({}, hit.rows[hit.at], { online });
        if (a.last_seen !== undefined) row.last_seen = a.last_seen;
        list.update(row);
      } else unknown = true;
    }
  };
  set(ch.joined, true);
  set(ch.left, false);
  // a newcomer's place in the list, or an 'online only' list that lost someone: ask the hub
  if (unknown || (document.getElementById('presence-online').checked && (ch.left || []).length)) {
    throttle('presence', 500, () => load('presence'));
  }
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
    status('');
  } catch (err) {
    failed(err);
  }
}

// ---------------------------------------------------------------- token and navigation

function askForToken(message) {
  state.ready = false;
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
  state.ready = true;
  document.getElementById('auth').hidden = true;
  document.getElementById('views').hidden = false;
  openStream();
}

function show(view) {
  state.view = VIEWS.includes(view) ? view : 'claims';
  for (const v of VIEWS) document.getElementById('view-' + v).hidden = v !== state.view;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.view === state.view);
  if (state.view === 'cluster') renderCluster();
  if (!state.ready) return; // the first loads wait for the token and the stream's hello
  if (state.view === 'messaging') load('messaging'); // not followed live while hidden
  // a list drawn while hidden guessed its height: draw what is in view now
  for (const n of VIEW_LISTS[state.view]) lists[n].fill().catch(failed);
}

function wire() {
  makeLists();
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
      refilter(view);
    }));
  }
  document.getElementById('presence-online').addEventListener('change', () => refilter('presence'));
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
  window.addEventListener('resize', () => { if (state.ready) for (const n of VIEW_LISTS[state.view]) lists[n].fill().catch(failed); });
  setInterval(tickLeases, 1000);
  show(location.hash.slice(1));
  start();
}

document.addEventListener('DOMContentLoaded', wire);
