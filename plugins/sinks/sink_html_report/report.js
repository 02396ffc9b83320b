// evalgraph report.html: everything is computed here from the embedded records (no network, no library).
// Records: gzip + base64 in <script class="eg-z"> chunks, one JSON record per line; each line is kept as
// text and parsed again only when its record is opened, so 100k records stay within memory.
'use strict';
(function () {
const RUN = JSON.parse(document.getElementById('eg-run').textContent || '{}');
const META = JSON.parse(document.getElementById('eg-meta').textContent || '{}');
// What the host said when the run was done (ABI 1.1: counts, LLM usage per provider); reports written by an
// older evalgraph have no such element.
const FINAL_EL = document.getElementById('eg-final');
const FINAL = (FINAL_EL && JSON.parse(FINAL_EL.textContent || '{}')) || {};
const ID_KEYS = ['id', 'record_id', 'unit_id', 'uid', 'example_id'];
const GROUP_KEYS = ['context_scope_id', 'transformation_label', 'transformation', 'model', 'method', 'scope', 'category', 'split'];
const ROW_H = 26;
const S = {lines: null, ids: [], keys: [], rep: [], status: null, group: null, groupKey: null, metrics: [], metricIndex: new Map(),
  nodes: [], cols: [], gv: {}, order: null, view: null, sort: null, openIdx: -1, idFilter: null};
// The field that names a record in a labels file (the pipeline's labels.key): its value per record is the
// record's key for labels and agreement (S.keys), else the record's id.
const LABEL_KEY = RUN.labels && typeof RUN.labels.key === 'string' ? RUN.labels.key : null;

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
const fmt = (v, d = 3) => v === null || v === undefined || Number.isNaN(v) ? '–' : (typeof v === 'boolean' ? (v ? 'true' : 'false') :
  (typeof v === 'number' ? (Number.isInteger(v) && Math.abs(v) < 1e9 ? String(v) : v.toFixed(d)) : esc(typeof v === 'string' ? v : JSON.stringify(v))));
const size = (b) => b >= 1048576 ? (b / 1048576).toFixed(1) + ' MiB' : (b / 1024).toFixed(1) + ' KiB';
const el = (tag, attrs, html) => { const e = document.createElement(tag); if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]); if (html !== undefined) e.innerHTML = html; return e; };

// The page's other parts (report_agreement.js: agreement with people; report_labelling.js: labelling) follow
// this file in the same <script> and register here before main() renders anything (main awaits the records
// first). A part may have: record(i, r) for each parsed record, ready() once all are, section() -> an element
// with an id (and nav: its link text), controls() -> HTML for the records' controls, setup() once the page is
// built, columns() -> [{head, cell(i)}] for the table, filter(i) -> false to leave a record out, order(list)
// -> the list reordered (or null), drill(i, r, panel) once a record is opened, key(event) -> true when handled.
const PARTS = [];
window.evalgraphPage = {S, RUN, FINAL, ROW_H, esc, fmt, el, json, register: (p) => PARTS.push(p),
  openRecord: (i) => openRecord(i), closeRecord: () => closeRecord(), applyView: () => applyView(), drawRows: () => drawRows(),
  showRecords: (ids, note) => showRecords(ids, note)};

// The records as bytes in blocks of 64 MiB (outside the JavaScript heap, which could not hold a million
// strings of 10 KB), each line within one block; line(i) decodes one record's text when it is needed.
class LineStore {
  constructor() { this.blocks = []; this.cur = null; this.used = 0; this.lb = new Uint16Array(1024); this.ls = new Uint32Array(1024); this.le = new Uint32Array(1024); this.length = 0; this.partial = 0; this.dec = new TextDecoder(); }
  newBlock(min) {
    const b = new Uint8Array(Math.max(64 << 20, min));
    if (this.cur) { b.set(this.cur.subarray(this.partial, this.used)); this.used -= this.partial; } else this.used = 0;
    this.partial = 0; this.cur = b; this.blocks.push(b);
  }
  push(u) {
    let p = 0;
    while (p < u.length) {
      let nl = u.indexOf(10, p);
      const end = nl < 0 ? u.length : nl;
      const seg = end - p;
      if (!this.cur || this.used + seg > this.cur.length) this.newBlock(this.used - this.partial + seg + 1);
      this.cur.set(u.subarray(p, end), this.used);
      this.used += seg;
      if (nl < 0) break;
      if (this.used > this.partial) this.addLine(this.blocks.length - 1, this.partial, this.used);
      this.partial = this.used;
      p = nl + 1;
    }
  }
  addLine(b, s, e) {
    if (this.length === this.ls.length) { const g = (a) => { const x = new a.constructor(a.length * 2); x.set(a); return x; }; this.lb = g(this.lb); this.ls = g(this.ls); this.le = g(this.le); }
    this.lb[this.length] = b; this.ls[this.length] = s; this.le[this.length] = e; this.length++;
  }
  finish() { if (this.cur && this.used > this.partial) this.addLine(this.blocks.length - 1, this.partial, this.used); }
  get(i) { return this.dec.decode(this.blocks[this.lb[i]].subarray(this.ls[i], this.le[i])); }
}

async function decodeLines() {
  const store = new LineStore();
  const chunks = Array.from(document.querySelectorAll('script.eg-z'));
  if (!chunks.length) return store;
  const ds = new DecompressionStream('gzip');
  const writer = ds.writable.getWriter();
  const feed = (async () => {
    for (const c of chunks) {
      const s = atob(c.textContent);
      const u = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
      await writer.write(u);
      c.textContent = '';  // the page needs the text no more
    }
    await writer.close();
  })();
  const reader = ds.readable.getReader();
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    store.push(value);
  }
  await feed;
  store.finish();
  return store;
}

// Numeric and boolean values of a node's output, by dotted path (depth <= 3; parameters are constants).
function flatten(v, path, depth, out) {
  if (v === null || v === undefined) return;
  if (typeof v === 'number' || typeof v === 'boolean') { out.push([path === '' ? 'value' : path, v]); return; }
  if (typeof v !== 'object' || Array.isArray(v) || depth >= 3) return;
  for (const k in v) { if (k === 'parameters' || k[0] === '_') continue; flatten(v[k], path ? path + '.' + k : k, depth + 1, out); }
}

function metric(node, field, isBool, n) {
  const key = node + '\t' + field;
  let m = S.metricIndex.get(key);
  if (!m) { m = {node, field, depth: field.split('.').length, bool: true, vals: new Float64Array(n).fill(NaN)}; S.metricIndex.set(key, m); S.metrics.push(m); }
  if (!isBool) m.bool = false;
  return m;
}

function analyse() {
  const n = S.lines.length;
  const nodeIds = (RUN.nodes || []).map((x) => x.id);
  S.nodes = RUN.nodes || [];
  S.status = new Uint8Array(n);  // 0 ok, 1 failed, 2 skipped, 3 invalid
  S.firstErr = {};
  S.nodeCounts = Object.fromEntries(nodeIds.map((id) => [id, {ok: 0, failed: 0, skipped: 0, invalid: 0}]));
  const groupVals = {};
  // The usual grouping fields, then the field the pipeline's sequence nodes group by (compression: session_id).
  const groupKeys = GROUP_KEYS.concat([RUN.group_by].concat(S.nodes.map((x) => x.group_by)).filter((g) => typeof g === 'string' && g && !GROUP_KEYS.includes(g)));
  const flat = [];
  for (let i = 0; i < n; i++) {
    let r;
    try { r = JSON.parse(S.lines.get(i)); } catch (e) { S.status[i] = 1; S.ids.push('#' + (i + 1)); S.keys.push(null); S.rep.push(null); continue; }
    let id = null;
    for (const k of ID_KEYS) if (typeof r[k] === 'string' || typeof r[k] === 'number') { id = String(r[k]); break; }
    if (id === null && r.conversation_id !== undefined && r.turn !== undefined) id = r.conversation_id + '/' + r.turn;
    if (id === null && r.session_id !== undefined && r.checkpoint !== undefined) id = r.session_id + '/' + r.checkpoint;
    if (id === null && r.data_file !== undefined && r.row !== undefined) id = r.data_file + ':' + r.row + (r.transformation !== undefined ? '/' + r.transformation : '');
    S.ids.push(id === null ? '#' + (i + 1) : id);
    const kv = LABEL_KEY === null ? S.ids[i] : r[LABEL_KEY];
    S.keys.push(typeof kv === 'string' || typeof kv === 'number' ? String(kv) : null);
    for (const p of PARTS) if (p.record) p.record(i, r);
    S.rep.push(r._replication !== undefined ? String(r._replication) : null);
    for (const g of groupKeys) if (typeof r[g] === 'string') { (groupVals[g] = groupVals[g] || new Set()).add(r[g]); (S.gv[g] = S.gv[g] || new Array(n).fill(''))[i] = r[g]; }
    const errs = r._errors || {}, skipped = r._skipped || {};
    let st = Object.keys(errs).length ? 1 : (Object.keys(skipped).length ? 2 : 0);
    for (const id2 of nodeIds) {
      const c = S.nodeCounts[id2];
      if (errs[id2] !== undefined) { c.failed++; if (!S.firstErr[id2]) S.firstErr[id2] = errs[id2]; continue; }
      if (skipped[id2] !== undefined) { c.skipped++; continue; }
      const out = r[id2];
      if (out === undefined) continue;
      c.ok++;
      if (out && typeof out === 'object' && out.valid === false) { c.invalid++; if (st === 0) st = 3; }
      flat.length = 0;
      flatten(out, '', 0, flat);
      for (const [f, v] of flat) metric(id2, f, typeof v === 'boolean', n).vals[i] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    }
    S.status[i] = st;
  }
  for (const g of groupKeys) if (groupVals[g] && groupVals[g].size >= 1 && groupVals[g].size <= 60) { S.groupKey = g; break; }
  if (S.groupKey) S.group = S.gv[S.groupKey];
  S.gv = null;
  // Table columns: per node its first-level values, the headline ones first (the field named like the node, value, score).
  for (const nd of S.nodes) {
    const ms = S.metrics.filter((m) => m.node === nd.id && m.depth === 1);
    const head = (m) => (m.field.toLowerCase() === nd.id.toLowerCase() || /^(value|score|verdict|valid)$/.test(m.field) || m.field.toLowerCase() === nd.id.replace(/^.*_/, '').toLowerCase()) ? 0 : 1;
    ms.sort((a, b) => head(a) - head(b));
    const pick = ms.filter((m) => !/^n_|_skipped$|^computed$|^short_answer/.test(m.field)).slice(0, 4);
    for (const m of pick) S.cols.push(m);
  }
}

// Mean with a 95 % interval: mean ± 1.96·sd/√n for numbers; for a boolean (bool: true) the share of true
// with Wilson's score interval, which stays within [0, 1] (the normal interval of 3 true in 64 reaches below 0).
function stats(vals, filter, bool) {
  let n = 0, s = 0, s2 = 0, mn = Infinity, mx = -Infinity;
  for (let i = 0; i < vals.length; i++) { if (filter && !filter(i)) continue; const v = vals[i]; if (Number.isNaN(v)) continue; n++; s += v; s2 += v * v; if (v < mn) mn = v; if (v > mx) mx = v; }
  const mean = n ? s / n : NaN;
  const sd = n > 1 ? Math.sqrt(Math.max(0, (s2 - n * mean * mean) / (n - 1))) : 0;
  if (bool && n) {
    const z = 1.96, z2 = z * z, c = (mean + z2 / (2 * n)) / (1 + z2 / n), w = z * Math.sqrt(mean * (1 - mean) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return {n, mean, sd, lo: Math.max(0, c - w), hi: Math.min(1, c + w), min: mn, max: mx};
  }
  const h = n > 1 ? 1.96 * sd / Math.sqrt(n) : 0;
  return {n, mean, sd, lo: mean - h, hi: mean + h, min: n ? mn : NaN, max: n ? mx : NaN};
}

window.evalgraphStats = stats;

function histogram(m, st) {
  const W = 240, H = 70, bins = m.bool ? 2 : 20;
  const cnt = new Array(bins).fill(0);
  const span = st.max - st.min || 1;
  for (const v of m.vals) { if (Number.isNaN(v)) continue; let b = m.bool ? v : Math.floor((v - st.min) / span * bins); if (b >= bins) b = bins - 1; if (b < 0) b = 0; cnt[b]++; }
  const top = Math.max(...cnt) || 1, bw = W / bins;
  let svg = `<svg class="hist" width="${W}" height="${H + 14}" viewBox="0 0 ${W} ${H + 14}" role="img" aria-label="histogram of ${esc(m.node + '.' + m.field)}">`;
  cnt.forEach((c, b) => { const h = c / top * H; svg += `<rect class="${m.bool && b === 0 ? 'b0' : ''}" x="${(b * bw + 0.5).toFixed(1)}" y="${(H - h).toFixed(1)}" width="${Math.max(1, bw - 1).toFixed(1)}" height="${h.toFixed(1)}"><title>${m.bool ? (b ? 'true' : 'false') : fmt(st.min + b * span / bins) + ' – ' + fmt(st.min + (b + 1) * span / bins)}: ${c}</title></rect>`; });
  svg += m.bool ? `<text x="${bw / 2 - 10}" y="${H + 11}">false</text><text x="${bw * 1.5 - 10}" y="${H + 11}">true</text>` : `<text x="0" y="${H + 11}">${fmt(st.min)}</text><text x="${W - 30}" y="${H + 11}">${fmt(st.max)}</text>`;
  return svg + '</svg>';
}

// The pipeline's expect: verdict (docs/ci.md), first on the page: each expectation with its value, interval,
// bound and whether it held. Absent when the pipeline states none (or the report was written without it).
function renderExpectations() {
  const v = FINAL.expectations;
  if (!v || typeof v !== 'object' || !Array.isArray(v.results)) return null;
  const sec = el('section', {id: 'expectations'});
  const n = (x) => (x === null || x === undefined ? '—' : fmt(x));
  let h = `<h2>Expectations <span class="pill ${v.passed ? 'ok' : 'failed'}" id="expect-verdict">${v.total - v.failed} of ${v.total} passed</span></h2>` +
    '<table id="expect-table"><tr><th></th><th>expectation</th><th class="n">value</th><th>interval</th><th>bound</th><th class="n">n</th><th class="n">missing</th><th>why it failed</th></tr>';
  for (const r of v.results) {
    const bound = [r.min !== undefined ? '≥ ' + fmt(r.min) : '', r.max !== undefined ? '≤ ' + fmt(r.max) : ''].filter(Boolean).join(', ') +
      (r.judged === 'interval' ? ` (judged on the ${fmt(r.confidence * 100)} % interval)` : '');
    const iv = Array.isArray(r.interval) ? `[${r.interval[0] === null ? '−∞' : fmt(r.interval[0])}, ${r.interval[1] === null ? '∞' : fmt(r.interval[1])}] <span class="muted">${fmt(r.interval_level * 100)} %</span>` : '';
    h += `<tr class="${r.passed ? '' : 'failed'}"><td><span class="pill ${r.passed ? 'ok' : 'failed'}">${r.passed ? 'pass' : 'FAIL'}</span></td><td><b>${esc(r.name)}</b> <span class="muted">${esc(r.line || '')}</span></td>` +
      `<td class="n">${n(r.value)}</td><td>${iv}</td><td>${esc(bound)}</td><td class="n">${r.n}</td><td class="n">${r.missing}</td><td class="bad">${esc(r.message || '')}</td></tr>`;
  }
  sec.innerHTML = h + '</table>';
  return sec;
}

function renderRun() {
  const sec = el('section', {id: 'run'});
  const nRec = S.lines.length, failed = S.status.reduce((a, s) => a + (s === 1 || s === 2 ? 1 : 0), 0), invalid = S.status.reduce((a, s) => a + (s === 3 ? 1 : 0), 0);
  let h = '<h2>Run</h2><table class="kv">';
  const kv = [['pipeline', RUN.pipeline], ['description', RUN.description], ['pipeline file', RUN.pipeline_file], ['dataset', RUN.dataset],
    ['records', `<b id="n-records">${nRec}</b>` + (RUN.replications > 1 ? ` (${RUN.replications} replications per dataset record)` : '')],
    ['with failures or skips', failed ? `<span class="bad">${failed}</span>` : '0'], ['with invalid verdicts', invalid ? `<span class="bad">${invalid}</span>` : '0'],
    ['embeddings', RUN.embeddings], ['engine', RUN.engine_version ? 'evalgraph ' + RUN.engine_version : ''], ['report written', RUN.report_written],
    ['embedded', META.raw_bytes ? `${size(META.raw_bytes)} of records, ${size(META.compressed_bytes)} compressed` : '']];
  for (const [k, v] of kv) if (v !== undefined && v !== null && v !== '') h += `<tr><td>${k}</td><td>${k === 'records' || k.startsWith('with') || k === 'embedded' ? v : esc(v)}</td></tr>`;
  h += '</table>' + renderLlm() + renderCost() + '<h3>Nodes</h3><table><tr><th>node</th><th>type</th><th>kind</th><th>plugin</th><th class="n">ok</th><th class="n">failed</th><th class="n">skipped</th><th class="n">invalid</th><th>parameters</th><th>first error</th></tr>';
  for (const nd of S.nodes) {
    const c = S.nodeCounts[nd.id] || {};
    h += `<tr><td><b>${esc(nd.id)}</b></td><td><code>${esc(nd.uses)}</code></td><td>${esc(nd.kind || '')}</td><td>${esc(nd.plugin)} ${esc(nd.plugin_version)}</td>` +
      `<td class="n">${c.ok}</td><td class="n ${c.failed ? 'bad' : ''}">${c.failed}</td><td class="n ${c.skipped ? 'warn' : ''}">${c.skipped}</td><td class="n ${c.invalid ? 'bad' : ''}">${c.invalid}</td>` +
      `<td class="mono">${esc(JSON.stringify(nd.with || {}))}</td><td class="bad">${esc(S.firstErr[nd.id] || '')}</td></tr>`;
  }
  h += '</table>';
  // A node described by its plugin (a python node: its script, SHA-256, signature, parameters, docstring).
  for (const nd of S.nodes)
    if (nd.described) h += `<details><summary>${esc(nd.id)}: <code>${esc(nd.described.script || '')}</code> ${esc(nd.described.signature || '')}</summary>${json(nd.described)}</details>`;
  if (RUN.sinks) h += '<h3>Sinks</h3><p>' + RUN.sinks.map((s) => `<code>${esc(s.uses)}</code> ${esc(JSON.stringify(s.with || {}))}`).join(' · ') + '</p>';
  sec.innerHTML = h;
  sec.appendChild(renderDag());
  return sec;
}

// LLM usage per provider, as run.json's "llm" (a merged run: its shards' summed): one row per provider that
// was called, the columns the host reported (known ones first, in this order), totals for several providers.
const LLM_COLS = [['calls', 'calls'], ['http_requests', 'HTTP requests'], ['cache_hits', 'cache hits'], ['cache_misses', 'cache misses'],
  ['merged', 'merged'], ['retries', 'retries'], ['errors', 'errors'], ['malformed_responses', 'malformed'], ['prompt_tokens', 'prompt tokens'],
  ['completion_tokens', 'completion tokens'], ['latency_mean_s', 'mean latency (s)'], ['latency_total_s', 'total latency (s)']];
function renderLlm() {
  const llm = FINAL.llm && typeof FINAL.llm === 'object' && !Array.isArray(FINAL.llm) ? FINAL.llm : {};
  const provs = Object.keys(llm).filter((p) => llm[p] && typeof llm[p] === 'object');
  const used = provs.filter((p) => Object.values(llm[p]).some((v) => typeof v === 'number' && v > 0));
  let h = '<h3>LLM usage</h3>';
  if (!FINAL_EL) return h + '<p class="muted" id="llm-usage">no LLM calls recorded (this report was written without the run\'s final counts)</p>';
  if (!used.length) return h + `<p class="muted" id="llm-usage">no LLM calls${provs.length ? ' (providers declared: ' + provs.map(esc).join(', ') + ')' : ''}</p>`;
  const known = new Set(LLM_COLS.map((c) => c[0]));
  const cols = LLM_COLS.filter(([k]) => used.some((p) => typeof llm[p][k] === 'number'));
  for (const p of used) for (const k in llm[p]) if (typeof llm[p][k] === 'number' && !known.has(k)) { known.add(k); cols.push([k, k.replace(/_/g, ' ')]); }
  h += '<table id="llm-usage"><tr><th>provider</th>' + cols.map(([, t]) => `<th class="n">${esc(t)}</th>`).join('') + '</tr>';
  const cell = (k, v) => `<td class="n${(k === 'errors' || k === 'malformed_responses') && v > 0 ? ' bad' : ''}" data-k="${esc(k)}">${fmt(v)}</td>`;
  for (const p of used) h += `<tr data-provider="${esc(p)}"><td><b>${esc(p)}</b></td>` + cols.map(([k]) => cell(k, llm[p][k])).join('') + '</tr>';
  if (used.length > 1) {
    const sum = (k) => k === 'latency_mean_s' ? undefined : used.reduce((a, p) => a + (typeof llm[p][k] === 'number' ? llm[p][k] : 0), 0);
    h += '<tr class="total"><td>all providers</td>' + cols.map(([k]) => cell(k, sum(k))).join('') + '</tr>';
  }
  const idle = provs.filter((p) => !used.includes(p));
  return h + '</table>' + (idle.length ? `<p class="muted">not called: ${idle.map(esc).join(', ')}</p>` : '');
}

// What the run's LLM calls cost, as run.json's "cost" (docs/cost.md): the total with its parts, then per
// provider (with its price) and per node. Cache hits and merged calls cost nothing and are counted apart.
const COST_COLS = [['cost_usd', 'cost (USD)'], ['billed_calls', 'billed calls'], ['cache_hits', 'cache hits'], ['merged', 'merged'],
  ['prompt_tokens', 'prompt tokens'], ['cached_prompt_tokens', 'cached prompt tokens'], ['completion_tokens', 'completion tokens'],
  ['usage_estimated_calls', 'usage estimated'], ['input_cost_usd', 'input (USD)'], ['cached_input_cost_usd', 'cached input (USD)'],
  ['output_cost_usd', 'output (USD)']];
function renderCost() {
  const c = FINAL.cost && typeof FINAL.cost === 'object' && !Array.isArray(FINAL.cost) ? FINAL.cost : null;
  if (!c || !c.calls) return '';
  const usd = (v) => typeof v === 'number' ? '$' + v.toFixed(v >= 100 ? 2 : v >= 0.01 || v === 0 ? 4 : 6) : '–';
  const cell = (k, v) => `<td class="n" data-k="${esc(k)}">${k.endsWith('_usd') ? usd(v) : fmt(v)}</td>`;
  const row = (label, o, extra) => `<tr><td><b>${esc(label)}</b></td>` + COST_COLS.map(([k]) => cell(k, o[k])).join('') + `<td>${extra || ''}</td></tr>`;
  const head = (first, last) => `<tr><th>${first}</th>` + COST_COLS.map(([, t]) => `<th class="n">${esc(t)}</th>`).join('') + `<th>${last}</th></tr>`;
  let h = `<h3>Cost</h3><p id="cost-total">total <b>${usd(c.cost_usd)}</b> = input ${usd(c.input_cost_usd)} + cached input ${usd(c.cached_input_cost_usd)} + output ${usd(c.output_cost_usd)}` +
    ` · ${fmt(c.billed_calls)} billed calls, ${fmt(c.cache_hits)} cache hits (free)` +
    (c.earlier_sessions ? ` · ${usd(c.earlier_sessions.cost_usd)} of it spent before the run was resumed` : '') +
    (c.usage_estimated_calls ? ` · tokens of ${fmt(c.usage_estimated_calls)} calls estimated (${esc(c.tokenizer || '')})` : '') + '</p>';
  const provs = c.providers || {};
  h += '<table id="cost-providers">' + head('provider', 'price (USD per million tokens)');
  for (const p of Object.keys(provs)) {
    const pr = provs[p].price;
    h += row(p, provs[p], pr ? `in ${pr.input_per_mtok}, out ${pr.output_per_mtok}` + (pr.cached_input_per_mtok !== undefined ? `, cached in ${pr.cached_input_per_mtok}` : '') : '<span class="muted">no price: free</span>');
  }
  h += '</table>';
  const nodes = c.nodes || {};
  h += '<table id="cost-nodes">' + head('node', 'providers');
  for (const n of Object.keys(nodes)) h += row(n, nodes[n], Object.keys(nodes[n].providers || {}).map(esc).join(', '));
  return h + '</table>';
}

// The DAG as layers: dataset, then each node one layer after its deepest upstream node, then the sinks.
function renderDag() {
  const wrap = el('div', {id: 'dag'}, '<h3>Pipeline graph</h3>');
  const layer = {};
  const byId = Object.fromEntries(S.nodes.map((n) => [n.id, n]));
  const depth = (id, seen = new Set()) => { if (layer[id] !== undefined) return layer[id]; if (seen.has(id)) return 1; seen.add(id); const up = (byId[id] && byId[id].upstream) || []; layer[id] = 1 + Math.max(0, ...up.map((u) => depth(u, seen))); return layer[id]; };
  S.nodes.forEach((n) => depth(n.id));
  const maxL = Math.max(0, ...Object.values(layer));
  const cols = [['dataset']];
  for (let l = 1; l <= maxL; l++) cols.push(S.nodes.filter((n) => layer[n.id] === l).map((n) => n.id));
  cols.push((RUN.sinks || []).map((s) => 'sink:' + s.id));
  const BW = 150, BH = 34, GX = 70, GY = 14;
  const pos = {};
  cols.forEach((c, x) => c.forEach((id, y) => { pos[id] = {x: 10 + x * (BW + GX), y: 10 + y * (BH + GY)}; }));
  const W = 20 + cols.length * (BW + GX), H = 20 + Math.max(...cols.map((c) => c.length)) * (BH + GY);
  let svg = `<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" style="max-width:100%">`;
  const edge = (a, b, label) => { const p = pos[a], q = pos[b]; if (!p || !q) return; const x1 = p.x + BW, y1 = p.y + BH / 2, x2 = q.x, y2 = q.y + BH / 2;
    svg += `<path d="M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}" fill="none" stroke="#8a94a6" stroke-width="1.2"><title>${esc(label)}</title></path>`; };
  for (const n of S.nodes) {
    const cols2 = Object.values(n.inputs || {}).filter((f) => !byId[f.split('.')[0]]);
    if (cols2.length || !(n.upstream || []).length) edge('dataset', n.id, cols2.join(', '));
    for (const u of n.upstream || []) edge(u, n.id, Object.values(n.inputs || {}).filter((f) => f.split('.')[0] === u).join(', ') || 'needs');
  }
  const last = S.nodes.filter((n) => !S.nodes.some((m) => (m.upstream || []).includes(n.id)));
  for (const s of RUN.sinks || []) for (const n of (last.length ? last : [{id: 'dataset'}])) edge(n.id, 'sink:' + s.id, 'records');
  const box = (id, label, sub, cls) => { const p = pos[id]; svg += `<g><rect x="${p.x}" y="${p.y}" width="${BW}" height="${BH}" rx="5" fill="${cls}" stroke="#8a94a6"/><text x="${p.x + 8}" y="${p.y + 14}" style="font-size:12px;fill:#1d2330;font-weight:600">${esc(label.slice(0, 22))}</text><text x="${p.x + 8}" y="${p.y + 27}">${esc(sub.slice(0, 26))}</text></g>`; };
  box('dataset', 'dataset', String(RUN.dataset || '').split('/').pop(), '#eef3fb');
  for (const n of S.nodes) box(n.id, n.id, n.uses, '#fff');
  for (const s of RUN.sinks || []) box('sink:' + s.id, s.uses, 'sink', '#f6f7f9');
  wrap.insertAdjacentHTML('beforeend', svg + '</svg>');
  return wrap;
}

function renderMetrics() {
  const sec = el('section', {id: 'metrics'});
  let h = '<h2>Outputs</h2><p class="muted">Mean with a 95 % interval (mean ± 1.96·sd/√n) over the records that have the value; booleans as the share of true with the Wilson score interval.</p><div class="cards">';
  const main = S.metrics.filter((m) => m.depth === 1);
  for (const m of main) {
    const st = stats(m.vals, null, m.bool);
    if (!st.n) continue;
    h += `<div class="card metric" data-metric="${esc(m.node + '.' + m.field)}"><div class="t">${esc(m.node)}.${esc(m.field)}</div><div class="v">${fmt(st.mean)} <span class="muted" style="font-size:12px">[${fmt(st.lo)}, ${fmt(st.hi)}]</span></div>` +
      `<div class="muted">n ${st.n} · sd ${fmt(st.sd)} · min ${fmt(st.min)} · max ${fmt(st.max)}</div>${histogram(m, st)}</div>`;
  }
  h += '</div>';
  if (S.groupKey) {
    const groups = [...new Set(S.group)].sort();
    const ms = main.filter((m) => !m.bool && S.cols.includes(m));
    h += `<h3>By ${esc(S.groupKey)}</h3><table id="by-group"><tr><th>${esc(S.groupKey)}</th><th class="n">records</th>${ms.map((m) => `<th class="n">${esc(m.node + '.' + m.field)}</th>`).join('')}</tr>`;
    for (const g of groups) {
      const f = (i) => S.group[i] === g;
      let cnt = 0; for (let i = 0; i < S.group.length; i++) if (S.group[i] === g) cnt++;
      h += `<tr><td>${esc(g || '(none)')}</td><td class="n">${cnt}</td>` + ms.map((m) => { const st = stats(m.vals, f, m.bool); return `<td class="n">${fmt(st.mean)} <span class="muted">[${fmt(st.lo)}, ${fmt(st.hi)}]</span></td>`; }).join('') + '</tr>';
    }
    h += '</table>';
  }
  const deep = S.metrics.filter((m) => m.depth > 1);
  if (deep.length) {
    h += `<details><summary>all ${deep.length} nested values</summary><table><tr><th>value</th><th class="n">n</th><th class="n">mean</th><th class="n">95 % interval</th><th class="n">min</th><th class="n">max</th></tr>`;
    for (const m of deep) { const st = stats(m.vals, null, m.bool); if (st.n) h += `<tr><td>${esc(m.node + '.' + m.field)}</td><td class="n">${st.n}</td><td class="n">${fmt(st.mean)}</td><td class="n">[${fmt(st.lo)}, ${fmt(st.hi)}]</td><td class="n">${fmt(st.min)}</td><td class="n">${fmt(st.max)}</td></tr>`; }
    h += '</table></details>';
  }
  sec.innerHTML = h;
  return sec;
}

// Fleiss' kappa: subjects × categories counts, each subject rated by the same number of raters.
function fleissKappa(table) {
  const N = table.length; if (!N) return NaN;
  const n = table[0].reduce((a, b) => a + b, 0); if (n < 2) return NaN;
  const k = table[0].length, pj = new Array(k).fill(0);
  let Pbar = 0;
  for (const row of table) { let s = 0; row.forEach((c, j) => { s += c * c; pj[j] += c; }); Pbar += (s - n) / (n * (n - 1)); }
  Pbar /= N;
  const Pe = pj.reduce((a, c) => a + (c / (N * n)) ** 2, 0);
  return Pe >= 1 ? NaN : (Pbar - Pe) / (1 - Pe);  // one category only: kappa is undefined
}
window.evalgraphFleissKappa = fleissKappa;

function renderAgreement() {
  if (!(RUN.replications > 1)) return null;
  const judges = S.nodes.filter((n) => n.kind === 'judge' || n.uses_llm);
  const rows = [];
  for (const nd of judges) {
    const byRec = new Map();
    const vm = S.metricIndex.get(nd.id + '\tvalue') || S.metricIndex.get(nd.id + '\tverdict');
    const valid = S.metricIndex.get(nd.id + '\tvalid');
    if (!vm) continue;
    for (let i = 0; i < S.lines.length; i++) {
      let cat = valid && valid.vals[i] === 0 ? 'invalid' : (Number.isNaN(vm.vals[i]) ? null : String(vm.vals[i]));
      if (cat === null) continue;
      const key = S.ids[i];
      if (!byRec.has(key)) byRec.set(key, []);
      byRec.get(key).push(cat);
    }
    const cats = [...new Set([].concat(...byRec.values()))].sort();
    if (cats.length > 12) continue;  // a continuous score, not a verdict
    const full = [...byRec.values()].filter((v) => v.length === RUN.replications);
    if (!full.length) continue;
    const table = full.map((v) => cats.map((c) => v.filter((x) => x === c).length));
    const unanimous = full.filter((v) => v.every((x) => x === v[0])).length;
    const inv = full.reduce((a, v) => a + v.filter((x) => x === 'invalid').length, 0);
    rows.push(`<tr class="agreement"><td>${esc(nd.id)}</td><td class="n">${full.length}</td><td class="n">${RUN.replications}</td><td class="n">${(100 * unanimous / full.length).toFixed(1)} %</td><td class="n kappa">${cats.length < 2 ? '<span class="muted" title="every replication gave the same verdict: κ is undefined">– (one verdict)</span>' : fmt(fleissKappa(table))}</td><td>${cats.map(esc).join(', ')}</td><td class="n">${inv}</td></tr>`);
  }
  if (!rows.length) return null;
  const sec = el('section', {id: 'agreement'});
  sec.innerHTML = `<h2>Judge agreement across replications</h2><p class="muted">Per judge: the records whose ${RUN.replications} replications all gave the same verdict, and Fleiss' κ (1 = perfect agreement, 0 = chance; below ~0.6 the means deserve caution). Invalid answers count as their own category.</p>` +
    `<table><tr><th>judge</th><th class="n">records</th><th class="n">replications</th><th class="n">unanimous</th><th class="n">Fleiss' κ</th><th>categories</th><th class="n">invalid answers</th></tr>${rows.join('')}</table>`;
  return sec;
}

function renderRecords() {
  const sec = el('section', {id: 'records'});
  const opts = S.metrics.filter((m) => m.depth === 1).map((m, k) => `<option value="${k}">${esc(m.node + '.' + m.field)}</option>`).join('');
  sec.innerHTML = `<h2>Records</h2><div id="controls"><input id="q" type="search" placeholder="search all fields (text, ids, evidence)…" size="36">` +
    `<select id="st"><option value="">all records</option><option value="ok">ok</option><option value="bad">failed or skipped</option><option value="invalid">invalid verdicts</option></select>` +
    `<span>range: <select id="rm"><option value="">(value)</option>${opts}</select> <input id="rmin" type="number" step="any" placeholder="min" style="width:80px"> <input id="rmax" type="number" step="any" placeholder="max" style="width:80px"></span>` +
    `<span id="count" class="muted"></span><span id="id-filter"></span></div>${PARTS.map((p) => (p.controls && p.controls()) || '').join('')}<div id="viewport"><table id="rtable"><thead></thead><tbody></tbody></table></div>`;
  return sec;
}

function setupTable() {
  const n = S.lines.length;
  const head = ['#', 'id'].concat(S.groupKey ? [S.groupKey] : [], ['status'], S.cols.map((m) => m.node + '.' + m.field));
  const firstMetric = head.length - S.cols.length;
  S.extraCols = [].concat(...PARTS.map((p) => (p.columns && p.columns()) || []));
  const thead = document.querySelector('#rtable thead');
  // metric columns are marked "mv" (hidden in blind review)
  thead.innerHTML = '<tr>' + head.map((h, k) => `<th data-k="${k}"${k >= firstMetric ? ' class="mv"' : ''} title="sort by ${esc(h)}">${esc(h)}</th>`).join('') +
    S.extraCols.map((c) => `<th class="x">${esc(c.head)}</th>`).join('') + '</tr>';
  thead.querySelectorAll('th[data-k]').forEach((th) => th.addEventListener('click', () => { const k = +th.dataset.k; S.sort = S.sort && S.sort.k === k ? {k, dir: -S.sort.dir} : {k, dir: 1}; applyView(); }));
  S.view = new Uint32Array(n).map((_, i) => i);
  const vp = document.getElementById('viewport');
  vp.addEventListener('scroll', () => requestAnimationFrame(drawRows));
  let t = null;
  const later = () => { clearTimeout(t); t = setTimeout(applyView, 200); };
  for (const id of ['q', 'rmin', 'rmax']) document.getElementById(id).addEventListener('input', later);
  for (const id of ['st', 'rm']) document.getElementById(id).addEventListener('change', applyView);
  document.querySelector('#rtable tbody').addEventListener('click', (e) => { const tr = e.target.closest('tr[data-i]'); if (tr) openRecord(+tr.dataset.i); });
  applyView();
}

function sortKey(k) {
  const base = 2 + (S.groupKey ? 1 : 0);
  if (k === 0) return (i) => i;
  if (k === 1) return (i) => S.ids[i];
  if (S.groupKey && k === 2) return (i) => S.group[i];
  if (k === base) return (i) => S.status[i];
  const m = S.cols[k - base - 1];
  return (i) => m.vals[i];
}

function applyView() {
  const q = document.getElementById('q').value.trim();
  const st = document.getElementById('st').value;
  const rmk = document.getElementById('rm').value;
  const lo = parseFloat(document.getElementById('rmin').value), hi = parseFloat(document.getElementById('rmax').value);
  const rm = rmk === '' ? null : S.metrics.filter((m) => m.depth === 1)[+rmk];
  let re = null;
  if (q) re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  const out = [];
  const partFilters = PARTS.filter((p) => p.filter);
  for (let i = 0; i < S.lines.length; i++) {
    const s = S.status[i];
    if (S.idFilter && !S.idFilter.ids.has(S.keys[i])) continue;
    if (partFilters.length && !partFilters.every((p) => p.filter(i))) continue;
    if (st === 'ok' && s !== 0) continue;
    if (st === 'bad' && s !== 1 && s !== 2) continue;
    if (st === 'invalid' && s !== 3) continue;
    if (rm) { const v = rm.vals[i]; if (Number.isNaN(v) || (!Number.isNaN(lo) && v < lo) || (!Number.isNaN(hi) && v > hi)) continue; }
    if (re && !re.test(S.lines.get(i))) continue;
    out.push(i);
  }
  // A part's order (the labelling's seeded random order) unless a column is sorted.
  const ordered = S.sort ? null : PARTS.reduce((o, p) => o || (p.order && p.order(out)), null);
  if (ordered) out.splice(0, out.length, ...ordered);
  else if (S.sort) {
    const key = sortKey(S.sort.k), dir = S.sort.dir;
    out.sort((a, b) => { let x = key(a), y = key(b); const xn = typeof x === 'number' && Number.isNaN(x), yn = typeof y === 'number' && Number.isNaN(y);
      if (xn || yn) return xn === yn ? a - b : (xn ? 1 : -1); return x < y ? -dir : x > y ? dir : a - b; });
  }
  S.view = out;
  document.getElementById('count').textContent = `${out.length} of ${S.lines.length} records`;
  document.querySelectorAll('#rtable thead th[data-k]').forEach((th) => { th.textContent = th.textContent.replace(/ [▲▼]$/, '') + (S.sort && +th.dataset.k === S.sort.k ? (S.sort.dir > 0 ? ' ▲' : ' ▼') : ''); });
  const vp = document.getElementById('viewport');
  vp.scrollTop = 0;
  drawRows();
}

const STATUS = ['<span class="pill ok">ok</span>', '<span class="pill failed">failed</span>', '<span class="pill skipped">skipped</span>', '<span class="pill invalid">invalid</span>'];
function drawRows() {
  const vp = document.getElementById('viewport');
  const tbody = document.querySelector('#rtable tbody');
  const total = S.view.length;
  const first = Math.max(0, Math.floor(vp.scrollTop / ROW_H) - 10);
  const last = Math.min(total, first + Math.ceil(vp.clientHeight / ROW_H) + 20);
  const ncol = 3 + (S.groupKey ? 1 : 0) + S.cols.length + S.extraCols.length;
  let h = `<tr style="height:${first * ROW_H}px"><td colspan="${ncol}" style="padding:0;border:0"></td></tr>`;
  for (let k = first; k < last; k++) {
    const i = S.view[k], s = S.status[i];
    h += `<tr data-i="${i}" class="${s === 1 || s === 2 ? 'failed' : s === 3 ? 'invalid' : ''}${i === S.openIdx ? ' open' : ''}"><td class="n">${i + 1}</td><td class="rid" title="${esc(S.ids[i])}">${esc(S.ids[i])}${S.rep[i] !== null ? ' <span class="muted">r' + esc(S.rep[i]) + '</span>' : ''}</td>` +
      (S.groupKey ? `<td>${esc(S.group[i])}</td>` : '') + `<td>${STATUS[s]}</td>` +
      S.cols.map((m) => { const v = m.vals[i]; return `<td class="n mv">${Number.isNaN(v) ? '–' : m.bool ? (v ? '✓' : '✗') : fmt(v)}</td>`; }).join('') +
      S.extraCols.map((c) => `<td class="x">${c.cell(i)}</td>`).join('') + '</tr>';
  }
  h += `<tr style="height:${Math.max(0, total - last) * ROW_H}px"><td colspan="${ncol}" style="padding:0;border:0"></td></tr>`;
  tbody.innerHTML = h;
}

// ---- one record opened ----
function docsOf(r) {
  const docs = {};
  for (const k in r) {
    const v = r[k];
    if (Array.isArray(v)) v.forEach((d, j) => { if (d && typeof d === 'object' && typeof d.text === 'string') docs[d.id !== undefined ? String(d.id) : k + '[' + j + ']'] = d.text; });
  }
  return docs;
}
const terms = (list, cls) => (list || []).map((t) => `<span class="term ${cls}">${esc(typeof t === 'string' ? t : JSON.stringify(t))}</span>`).join('');
function json(v) { return `<pre class="json">${esc(JSON.stringify(v, null, 2))}</pre>`; }

function renderSentences(out, r) {
  const docs = docsOf(r);
  let h = `<h4>Sentences (${out.sentences.length}; green supported, red unsupported, blue attributed)</h4>`;
  for (const s of out.sentences) {
    const cls = s.unsupported ? 'uns' : (s.attrib ? 'att' : 'sup');
    const doc = s.best_doc_id !== undefined && s.best_doc_id !== null ? docs[String(s.best_doc_id)] : undefined;
    let docHtml = doc === undefined ? '<span class="muted">no document</span>' : esc(doc);
    if (doc !== undefined && s.matched && s.matched.length) {
      const words = s.matched.filter((w) => typeof w === 'string' && w.length > 2).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      if (words.length) docHtml = docHtml.replace(new RegExp('(' + words.join('|') + ')', 'gi'), '<mark>$1</mark>');
    }
    h += `<div class="sent ${cls}"><div><div>${esc(s.text || '')}</div><div class="muted">align ${fmt(s.align)}${s.unsupported ? ' · <b class="bad">unsupported</b>' : ''}${s.attrib ? ' · attributed' : ''}</div>` +
      (s.matched ? `<div>matched ${terms(s.matched, 'm')}</div>` : '') + (s.missing && s.missing.length ? `<div>missing ${terms(s.missing, 'x')}</div>` : '') +
      (s.exact_missing && s.exact_missing.length ? `<div>exact missing ${terms(s.exact_missing, 'e')}</div>` : '') +
      `</div><div><div class="muted">best document: <b>${esc(s.best_doc_id ?? '–')}</b></div><div class="text">${docHtml}</div></div></div>`;
  }
  return h;
}

function renderS0(out) {
  let h = '<h4>Format expectations</h4>';
  const ex = out.expectations_detected || [];
  if (!ex.length) h += `<p class="muted">none asked for${out.no_explicit_format ? ' (no_explicit_format: F = neutral)' : ''}</p>`;
  else {
    h += '<table><tr><th>expectation</th><th>passed</th><th>raised by</th><th>items / counts</th><th>evidence</th></tr>';
    for (const e of ex) {
      const key = typeof e === 'string' ? e : JSON.stringify(e);
      const pass = (out.format_passed_map || {})[key];
      h += `<tr><td><b>${esc(key)}</b></td><td>${pass === undefined ? '–' : pass ? '<span class="good">✓ passed</span>' : '<span class="bad">✗ failed</span>'}</td>` +
        `<td>${esc(JSON.stringify((out.expectation_evidence || {})[key] ?? ''))}</td><td class="mono">${esc(JSON.stringify((out.format_items || {})[key] ?? (out.format_counts || {})[key] ?? ''))}</td>` +
        `<td class="mono">${esc(JSON.stringify((out.format_evidence || {})[key] ?? ''))}</td></tr>`;
    }
    h += '</table>';
  }
  if (out.format_counts && Object.keys(out.format_counts).length) h += `<div>format_counts ${json(out.format_counts)}</div>`;
  return h;
}

function renderK0(out) {
  const names = {Z: 'goal', R: 'role', D: 'data', C: 'constraints', E: 'expected output', T: 'tools'};
  let h = '<h4>Context dimensions</h4><div class="dims">';
  for (const d of ['Z', 'R', 'D', 'C', 'E', 'T']) {
    if (!(d in out.context_map)) continue;
    const on = out.context_map[d];
    h += `<div class="dim ${on ? 'on' : 'off'}"><b>${d}</b> ${names[d]} ${on ? '✓' : '✗'}<div class="muted" style="font-size:12px">${esc((out.context_evidence || {})[d] ?? '')}</div></div>`;
  }
  return h + '</div>' + (out.not_interpretable ? '<p class="bad">K₀ below the threshold: the answer is flagged not interpretable.</p>' : '');
}

function renderJudge(out) {
  const v = out.valid === false ? '<span class="pill invalid">invalid verdict</span>' : `<b>${esc(JSON.stringify(out.verdict ?? out.value))}</b>`;
  return `<h4>Verdict ${v}${out.task ? ' · task ' + esc(out.task) : ''}</h4>` + (out.raw !== undefined ? `<div class="muted">raw answer</div><div class="text">${esc(typeof out.raw === 'string' ? out.raw : JSON.stringify(out.raw))}</div>` : '');
}

function renderOutput(nd, out, r) {
  let h = '';
  if (out && typeof out === 'object' && !Array.isArray(out)) {
    const scal = Object.entries(out).filter(([, v]) => typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length < 80));
    h += '<div class="chips">' + scal.map(([k, v]) => `<span class="chip"><span class="muted">${esc(k)}</span> ${fmt(v, 4)}</span>`).join('') + '</div>';
    if (Array.isArray(out.sentences) && out.sentences.length && typeof out.sentences[0] === 'object') h += renderSentences(out, r);
    if ('expectations_detected' in out) h += renderS0(out);
    if (out.context_map && typeof out.context_map === 'object') h += renderK0(out);
    if ('raw' in out || nd.kind === 'judge') h += renderJudge(out);
    if (out.weights || out.components) h += `<h4>Components and weights</h4>${json({components: out.components, weights: out.weights})}`;
    if (out.parameters) h += `<details><summary>parameters</summary>${json(out.parameters)}</details>`;
  }
  if (nd.with && Object.keys(nd.with).length)  // e.g. chatbot.score's weights
    h += `<details${nd.uses === 'chatbot.score' ? ' open' : ''}><summary>parameters in the pipeline</summary>${json(nd.with)}</details>`;
  return h + `<details><summary>full output (JSON)</summary>${json(out)}</details>`;
}

function openRecord(i) {
  const r = JSON.parse(S.lines.get(i));
  S.openIdx = i;
  const nodeIds = new Set(S.nodes.map((n) => n.id));
  let h = `<button class="close" title="close (Esc)">×</button><h2>Record <span id="drill-id">${esc(S.ids[i])}</span>${S.rep[i] !== null ? ' · replication ' + esc(S.rep[i]) : ''} ${STATUS[S.status[i]]}</h2>`;
  const errs = r._errors || {}, sk = r._skipped || {};
  for (const k in errs) h += `<p class="bad"><b>${esc(k)} failed:</b> ${esc(errs[k])}</p>`;
  for (const k in sk) h += `<p class="warn"><b>${esc(k)} skipped:</b> ${esc(sk[k])}</p>`;

  for (const nd of S.nodes) {
    if (!(nd.id in r)) continue;
    h += `<section class="node-out" data-node="${esc(nd.id)}"><h3>${esc(nd.id)} <span class="muted">${esc(nd.uses)}</span></h3>${renderOutput(nd, r[nd.id], r)}</section>`;
  }
  h += '<section><h3>Inputs</h3><table class="kv">';
  for (const k in r) {
    if (nodeIds.has(k) || k === '_errors' || k === '_skipped' || (k === '_labels' && RUN.labels)) continue;  // _labels: report_labelling.js
    const v = r[k];
    h += `<tr><td>${esc(k)}</td><td>${typeof v === 'string' ? (v.length > 120 ? `<div class="text">${esc(v)}</div>` : esc(v)) : (v && typeof v === 'object' ? `<details><summary>${Array.isArray(v) ? v.length + ' items' : 'object'}</summary>${json(v)}</details>` : fmt(v))}</td></tr>`;
  }
  h += '</table></section>';
  if (RUN.replications > 1) {
    const same = [];
    for (let j = 0; j < S.lines.length && same.length < 50; j++) if (j !== i && S.ids[j] === S.ids[i]) same.push(j);
    if (same.length) h += `<section><h3>Other replications of this record</h3>${same.map((j) => `<a href="#" data-open="${j}">replication ${esc(S.rep[j])}</a>`).join(' · ')}</section>`;
  }
  const d = document.getElementById('drill');
  d.innerHTML = h;
  d.classList.add('open');
  d.scrollTop = 0;
  d.querySelector('.close').addEventListener('click', closeRecord);
  d.querySelectorAll('[data-open]').forEach((a) => a.addEventListener('click', (e) => { e.preventDefault(); openRecord(+a.dataset.open); }));
  for (const p of PARTS) if (p.drill) p.drill(i, r, d);
  history.replaceState(null, '', '#record=' + (i + 1));
  if (S.view) drawRows();  // marks the open row
}
function closeRecord() {
  const wasOpen = S.openIdx >= 0;
  document.getElementById('drill').classList.remove('open'); S.openIdx = -1; history.replaceState(null, '', '#');
  if (wasOpen && S.view) drawRows();
}

// Only the records whose key is in `ids` (a confusion matrix cell), with a note saying which; null: all again.
function showRecords(ids, note) {
  S.idFilter = ids ? {ids: new Set(ids.map(String)), note} : null;
  const f = document.getElementById('id-filter');
  f.innerHTML = ids ? `<span class="chip filter">${esc(note)} <button type="button" title="show all records again">×</button></span>` : '';
  if (ids) f.querySelector('button').addEventListener('click', () => showRecords(null));
  applyView();
  if (ids) document.getElementById('records').scrollIntoView();
}

async function main() {
  const app = document.getElementById('app');
  const t0 = performance.now();
  try {
    S.lines = await decodeLines();
  } catch (e) {
    document.getElementById('loading').textContent = 'cannot read the embedded records: ' + e;
    throw e;
  }
  analyse();
  const sub = document.getElementById('loading');
  sub.textContent = `${RUN.pipeline_file || ''} · ${S.lines.length} records · report written ${RUN.report_written || ''}`;
  const expectations = renderExpectations();
  for (const p of PARTS) if (p.ready) p.ready();
  const extra = PARTS.map((p) => p.section && p.section()).filter(Boolean);
  const nav = el('nav', null, (expectations ? '<a href="#expectations">Expectations</a>' : '') + '<a href="#run">Run</a><a href="#metrics">Outputs</a>' +
    extra.map((x) => `<a href="#${x.id}">${esc(x.dataset.nav || x.id)}</a>`).join('') + (RUN.replications > 1 ? '<a href="#agreement">Judge agreement</a>' : '') + '<a href="#records">Records</a>');
  const main = el('main');
  if (expectations) main.appendChild(expectations);
  main.appendChild(renderRun());
  main.appendChild(renderMetrics());
  for (const x of extra) main.appendChild(x);
  const ag = renderAgreement();
  if (ag) main.appendChild(ag);
  main.appendChild(renderRecords());
  app.appendChild(nav);
  app.appendChild(main);
  app.appendChild(el('div', {id: 'drill'}));
  setupTable();
  for (const p of PARTS) if (p.setup) p.setup();
  document.addEventListener('keydown', (e) => { if (PARTS.some((p) => p.key && p.key(e))) return; if (e.key === 'Escape') closeRecord(); });
  const m = /#record=(\d+)/.exec(location.hash);
  if (m && +m[1] >= 1 && +m[1] <= S.lines.length) openRecord(+m[1] - 1);
  document.body.dataset.ready = 'true';
  document.body.dataset.loadMs = String(Math.round(performance.now() - t0));
  document.body.dataset.readyMs = String(Math.round(performance.now()));
}
// #selftest (used by the browser test): scrolls the whole table, recording every id the rows showed, checks
// sorting and search, opens the first record with sentences, and writes the findings into <pre id="eg-selftest">.
const ERRORS = [];
window.addEventListener('error', (e) => ERRORS.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => ERRORS.push(String(e.reason)));
function selftest() {
  const vp = document.getElementById('viewport');
  const seen = new Set();
  const t0 = performance.now();
  let pages = 0;
  for (let top = 0; top <= S.view.length * ROW_H; top += Math.max(ROW_H, vp.clientHeight - ROW_H)) {
    pages++;
    vp.scrollTop = top;
    drawRows();
    document.querySelectorAll('#rtable td.rid').forEach((td) => seen.add(td.title));
  }
  const out = {records: S.lines.length, ids_rendered: [...seen], errors: ERRORS, scroll_ms_per_page: +((performance.now() - t0) / Math.max(1, pages)).toFixed(2)};
  const num = S.cols.findIndex((m) => !m.bool);
  if (num >= 0) {
    const k = 3 + (S.groupKey ? 1 : 0) + num;
    const th = document.querySelector(`#rtable thead th[data-k="${k}"]`);
    const ts = performance.now();
    th.click(); th.click();  // descending
    out.sort_ms = Math.round((performance.now() - ts) / 2);
    const m = S.cols[num];
    const vals = Array.from(S.view).map((i) => m.vals[i]).filter((v) => !Number.isNaN(v));
    out.sorted_by = m.node + '.' + m.field;
    out.sorted_desc = vals.every((v, j) => j === 0 || vals[j - 1] >= v);
    out.first_row_after_sort = document.querySelector('#rtable tbody tr[data-i] td.rid').title;
  }
  const q = document.getElementById('q');
  let t = performance.now();
  if (S.lines.length) {
    const lastId = S.ids[S.lines.length - 1];
    q.value = S.lines.get(S.lines.length - 1).includes(JSON.stringify(lastId)) ? lastId : '"' + Object.keys(JSON.parse(S.lines.get(0)))[0] + '"';
    t = performance.now();
    applyView();
    out.search_ms = Math.round(performance.now() - t);
    out.search_hits = S.view.length;
  }
  q.value = '';
  S.sort = null;
  applyView();
  t = performance.now();
  let open = -1;
  for (let i = 0; i < S.lines.length && open < 0; i++) if (S.lines.get(i).includes('"sentences":[{')) open = i;
  if (open >= 0) {
    document.querySelector(`#rtable tbody tr[data-i="${open}"]`) ? document.querySelector(`#rtable tbody tr[data-i="${open}"] td`).click() : openRecord(open);
    out.opened = document.getElementById('drill-id').textContent;
    out.drill_sentences = document.querySelectorAll('#drill .sent').length;
    out.drill_nodes = Array.from(document.querySelectorAll('#drill .node-out')).map((e) => e.dataset.node);
    out.open_ms = Math.round(performance.now() - t);
  }
  out.ready_ms = +document.body.dataset.readyMs;
  // Fleiss' kappa on the worked example of Fleiss (1971) as given on Wikipedia (10 subjects, 14 raters): 0.210.
  out.kappa_example = fleissKappa([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]).toFixed(3);
  out.cards = document.querySelectorAll('.card.metric').length;
  out.svg = document.querySelectorAll('svg').length;
  out.errors = ERRORS;
  document.body.appendChild(el('pre', {id: 'eg-selftest'}, esc(JSON.stringify(out))));
}
window.evalgraphReport = S;
main().then(() => { if (/selftest/.test(location.hash)) selftest(); }, (e) => ERRORS.push(String(e)));
})();
