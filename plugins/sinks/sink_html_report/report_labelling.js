// Labelling in the report, when the pipeline declares labels.fields (docs/agreement.md): each opened record gets
// a label control per field, driven by the keyboard so that a reviewer labels hundreds of records without the
// mouse; the labels stay in this browser (localStorage, per data set and annotator) across reloads; "Download
// labels" saves them as a JSONL file in the format the pipeline's labels: and `evalgraph agree --labels` read.
// Records can be shown in a seeded random order and with the metric values hidden (blind review).
// Registers with report.js (window.evalgraphPage); nothing happens when the pipeline declares no label fields.
(function () {
const P = window.evalgraphPage;
const L = P && P.RUN.labels;
if (!L || !L.fields || typeof L.fields !== 'object' || Array.isArray(L.fields) || !Object.keys(L.fields).length) return;
const {S, RUN, esc, el} = P;
const KEY = typeof L.key === 'string' && L.key ? L.key : 'id';
const WHO = typeof L.annotator === 'string' && L.annotator ? L.annotator : 'annotator';

// Per field its values and the keys that choose them. Binary: 1 or y yes, 0 or n no. Ordinal and category: a
// scale of distinct one-digit integers is chosen by its own digits (1-5 by 1-5, 0-4 by 0-4), any other by
// position (1-9, then 0 for the tenth; further values by click). Number: typed into its box.
function fieldSpec(name, spec) {
  const type = spec.type;
  if (type === 'binary') return {name, type, values: [true, false], names: ['yes', 'no'], keys: [['1', 'y'], ['0', 'n']]};
  if (type === 'number') return {name, type, values: null};
  const values = Array.isArray(spec.values) ? spec.values : [];
  const digits = values.every((v) => Number.isInteger(v) && v >= 0 && v <= 9) && new Set(values).size === values.length;
  return {name, type, values, names: values.map(String), keys: values.map((v, j) => digits ? [String(v)] : j < 9 ? [String(j + 1)] : j === 9 ? ['0'] : [])};
}
// In the order the pipeline declares them (field_order; JSON objects reach the page with their keys sorted).
const ORDER = Array.isArray(L.field_order) ? L.field_order.filter((n) => n in L.fields) : [];
for (const n of Object.keys(L.fields)) if (!ORDER.includes(n)) ORDER.push(n);
const FIELDS = ORDER.map((n) => fieldSpec(n, L.fields[n] || {}));
const KEYS_HELP = 'digits (y/n for yes/no) label the highlighted field · Tab / Shift+Tab: next / previous field · j or →: next record · ' +
  'k or ←: previous record · u: next unlabelled record · Backspace: clear the field · in a number box Enter keeps the number · Esc: close';

// ---- what is kept in the browser: per annotator, per record key: the key as the record has it and the values ----
const STORE = 'evalgraph-labels:' + JSON.stringify([RUN.pipeline || '', RUN.dataset || '', KEY]);
const store = {annotator: '', labels: {}, seed: '1', random: false, blind: false, advance: true, show: ''};
let persistent = true;
try {
  const kept = JSON.parse(localStorage.getItem(STORE) || 'null');
  if (kept && typeof kept === 'object') Object.assign(store, kept);
  if (!store.annotator) store.annotator = localStorage.getItem('evalgraph-annotator') || '';
} catch (e) { persistent = false; }
function save() {
  try {
    localStorage.setItem(STORE, JSON.stringify(store));
    if (store.annotator) localStorage.setItem('evalgraph-annotator', store.annotator);
  } catch (e) { persistent = false; note(); }
}
const mine = () => store.labels[store.annotator] || {};
const valuesOf = (k) => (k !== null && mine()[k] && mine()[k].v) || {};
const isSet = (v, f) => Object.prototype.hasOwnProperty.call(v, f.name);
const full = (k) => { const v = valuesOf(k); return FIELDS.every((f) => isSet(v, f)); };
const shown = (f, x) => f.type === 'binary' ? (x ? 'yes' : 'no') : String(x);

// ---- the records: their keys (report.js collects S.keys), whether a key is a number in the data ----
const numericKey = [];
let keyCount = 0, firstOfKey = new Map();
function record(i, r) { numericKey[i] = typeof r[KEY] === 'number'; }
function ready() {
  S.keys.forEach((k, i) => { if (k !== null && !firstOfKey.has(k)) firstOfKey.set(k, i); });
  keyCount = firstOfKey.size;
}
const rawKey = (i) => numericKey[i] ? Number(S.keys[i]) : S.keys[i];

function counts() {
  let done = 0, part = 0;
  const m = mine();
  for (const k in m) {
    if (!firstOfKey.has(k)) continue;
    const n = FIELDS.filter((f) => isSet(m[k].v, f)).length;
    if (n === FIELDS.length) done++; else if (n) part++;
  }
  return {done, part};
}
function showCounts() {
  const c = counts();
  const t = `${c.done} of ${keyCount} labelled` + (c.part ? ` (${c.part} partly)` : '');
  document.querySelectorAll('.lb-count').forEach((e) => { e.textContent = t; });
}
function note(msg) {
  const n = document.getElementById('lb-note');
  if (!n) return;
  n.innerHTML = (msg ? `<span class="warn">${esc(msg)}</span> ` : '') + (persistent ? '' :
    '<span class="bad">This browser keeps nothing for this page (localStorage is unavailable): download the labels before closing it.</span>');
}

// ---- setting a label ----
let focus = 0;  // the highlighted field
let cur = null;  // the opened record: {i, r}
function setValue(i, f, value) {
  if (!store.annotator) { askName(); return false; }
  const k = S.keys[i];
  const m = store.labels[store.annotator] = store.labels[store.annotator] || {};
  const entry = m[k] = m[k] || {k: rawKey(i), v: {}};
  if (value === undefined) delete entry.v[f.name]; else entry.v[f.name] = value;
  if (!Object.keys(entry.v).length) delete m[k];
  save();
  showCounts();
  P.drawRows();
  return true;
}
function askName() {
  const w = document.getElementById('lb-who-drill') || document.getElementById('lb-who');
  note('type your name as annotator first: the labels are kept and downloaded under it');
  if (w) w.focus();
}

// Moves the highlight on: to the next field without a value; when all have one, to the next record.
function advance() {
  if (!store.advance) { renderBar(); return; }
  const v = valuesOf(S.keys[cur.i]);
  for (let s = 1; s <= FIELDS.length; s++) {
    const j = (focus + s) % FIELDS.length;
    if (!isSet(v, FIELDS[j])) { focus = j; renderBar(); return; }
  }
  move(1);
}

// ---- moving between records in the table's order (its filter, sort or seeded random order) ----
function position() { return S.view ? Array.prototype.indexOf.call(S.view, S.openIdx) : -1; }
function move(dir, unlabelledOnly) {
  const view = S.view || [];
  const here = S.openIdx >= 0 ? S.keys[S.openIdx] : undefined;
  let p = position();
  if (p < 0) p = dir > 0 ? -1 : view.length;
  for (let s = 1; s <= view.length; s++) {
    const q = unlabelledOnly ? (p + s * dir + view.length * 2) % view.length : p + s * dir;  // unlabelled: wraps around
    if (q < 0 || q >= view.length) break;
    const i = view[q], k = S.keys[i];
    if (k === null || k === here) continue;  // no key: cannot be labelled; the same key: a replication
    if (unlabelledOnly && full(k)) continue;
    open(i);
    return true;
  }
  note(unlabelledOnly ? 'every record in the table has its labels' : dir > 0 ? 'this is the last record in the table' : 'this is the first record in the table');
  return false;
}
function open(i) {
  note();
  P.openRecord(i);
  const p = position(), vp = document.getElementById('viewport');
  if (p >= 0 && vp && (p * P.ROW_H < vp.scrollTop || (p + 1) * P.ROW_H > vp.scrollTop + vp.clientHeight)) {
    vp.scrollTop = Math.max(0, p * P.ROW_H - vp.clientHeight / 2);
    P.drawRows();
  }
}

// ---- the label bar at the top of an opened record ----
// A value with the key that chooses it ("1 yes"; a value that is its own key, as on a 1-5 scale, just once).
function keyed(f, vi) {
  const k = f.keys[vi][0];
  return k === undefined ? esc(f.names[vi]) : k === f.names[vi] ? `<kbd class="v">${esc(k)}</kbd>` : `<kbd>${esc(k)}</kbd> ${esc(f.names[vi])}`;
}
function givenText(r, f) {
  const g = r._labels && Array.isArray(r._labels[f.name]) ? r._labels[f.name] : [];
  return g.map((x) => (x.annotator ? esc(x.annotator) + ': ' : '') + esc(shown(f, x.value))).join(', ');
}
function fieldRow(f, j, v, r) {
  let h = `<div class="lb-field${j === focus ? ' focus' : ''}" data-f="${j}"><span class="lb-name">${esc(f.name)}</span>`;
  if (f.type === 'number') {
    h += `<input class="lb-num" data-f="${j}" inputmode="decimal" size="8" placeholder="a number" value="${isSet(v, f) ? esc(String(v[f.name])) : ''}">`;
  } else {
    h += f.values.map((x, vi) => `<button type="button" class="lb-val${isSet(v, f) && v[f.name] === x ? ' on' : ''}" data-f="${j}" data-v="${vi}"` +
      `${f.keys[vi].length ? ` title="key ${esc(f.keys[vi].join(' or '))}"` : ''}>${keyed(f, vi)}</button>`).join('');
  }
  const given = givenText(r, f);
  return h + (given ? `<span class="given muted">given: ${given}</span>` : '') + '</div>';
}
function renderBar() {
  const bar = document.getElementById('labelbar');
  if (!bar || !cur) return;
  const k = S.keys[cur.i];
  if (k === null) {
    bar.innerHTML = `<b>Labels</b> <span class="warn">this record has no <code>${esc(KEY)}</code> field: it cannot be labelled</span>`;
    return;
  }
  const v = valuesOf(k);
  bar.innerHTML = `<div class="lb-head"><b>Labels</b> for <code>${esc(KEY)}</code> = <b>${esc(k)}</b> as ` +
    `<input id="lb-who-drill" class="lb-who" size="12" placeholder="your name" value="${esc(store.annotator)}"> <span class="lb-count muted"></span>` +
    `<span class="lb-navs"><button type="button" data-go="-1">◀ k</button><button type="button" data-go="1">j ▶</button><button type="button" data-go="u">next unlabelled (u)</button></span></div>` +
    FIELDS.map((f, j) => fieldRow(f, j, v, cur.r)).join('') + `<div class="lb-keys muted">${esc(KEYS_HELP)}</div>`;
  showCounts();
  const num = bar.querySelector(`.lb-field.focus input.lb-num`);
  if (num && document.activeElement !== document.getElementById('lb-who-drill')) num.focus();
}
function barClick(ev) {
  const b = ev.target.closest('button');
  if (!b || !cur) return;
  if (b.dataset.go) { b.dataset.go === 'u' ? move(1, true) : move(+b.dataset.go); return; }
  if (b.dataset.v !== undefined) {
    const f = FIELDS[+b.dataset.f];
    focus = +b.dataset.f;
    const x = f.values[+b.dataset.v];
    if (setValue(cur.i, f, valuesOf(S.keys[cur.i])[f.name] === x ? undefined : x)) renderBar();  // a second click clears
  }
}
function commitNumber(input) {
  const f = FIELDS[+input.dataset.f], t = input.value.trim(), x = Number(t);
  if (t !== '' && !Number.isFinite(x)) { input.classList.add('badval'); note(`${f.name}: "${t}" is not a number`); return false; }
  input.classList.remove('badval');
  return setValue(cur.i, f, t === '' ? undefined : x);
}
function drill(i, r, d) {
  cur = {i, r};
  const v = valuesOf(S.keys[i]);
  const unset = FIELDS.findIndex((f) => !isSet(v, f));
  focus = unset >= 0 ? unset : 0;
  const bar = el('div', {id: 'labelbar'});
  d.querySelector('h2').insertAdjacentElement('afterend', bar);
  bar.addEventListener('click', barClick);
  bar.addEventListener('change', (ev) => { if (ev.target.classList.contains('lb-num')) commitNumber(ev.target); });
  bar.addEventListener('input', (ev) => { if (ev.target.id === 'lb-who-drill') setAnnotator(ev.target.value); });
  bar.addEventListener('focusin', (ev) => { const f = ev.target.dataset && ev.target.dataset.f; if (f !== undefined && +f !== focus) { focus = +f; bar.querySelectorAll('.lb-field').forEach((e) => e.classList.toggle('focus', +e.dataset.f === focus)); } });
  // A label field that is also a record field (labels kept in the data set) is a value to hide in blind review.
  const names = new Set(FIELDS.map((f) => f.name));
  d.querySelectorAll('table.kv tr').forEach((tr) => { if (tr.cells.length && names.has(tr.cells[0].textContent)) tr.classList.add('mv'); });
  renderBar();
}

// ---- keys ----
function key(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  const t = e.target;
  if (t && t.classList && t.classList.contains('lb-num')) return numberKey(e, t);
  if (t && t.classList && t.classList.contains('lb-who') && e.key === 'Enter') { t.blur(); return true; }  // name typed: keys label again
  const typing = t && (t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || (t.tagName === 'INPUT' && !['checkbox', 'radio', 'button'].includes(t.type)));
  if (typing) return false;
  if (S.openIdx < 0 || !cur) {  // nothing open: j starts at the table's first record, u at its first unlabelled one
    if (e.key === 'j') { move(1); return true; }
    if (e.key === 'u') { move(1, true); return true; }
    return false;
  }
  const f = FIELDS[focus];
  if (e.key === 'Tab') { e.preventDefault(); focus = (focus + (e.shiftKey ? FIELDS.length - 1 : 1)) % FIELDS.length; renderBar(); return true; }
  if (e.key === 'j' || e.key === 'ArrowRight') { e.preventDefault(); move(1); return true; }
  if (e.key === 'k' || e.key === 'ArrowLeft') { e.preventDefault(); move(-1); return true; }
  if (e.key === 'u') { move(1, true); return true; }
  if (S.keys[cur.i] === null) return false;
  if (e.key === 'Backspace' || e.key === 'Delete') { e.preventDefault(); if (setValue(cur.i, f, undefined)) renderBar(); return true; }
  if (f.type === 'number') return false;
  const vi = f.keys.findIndex((ks) => ks.includes(e.key.toLowerCase()));
  if (vi < 0) return false;
  e.preventDefault();
  if (setValue(cur.i, f, f.values[vi])) advance();
  return true;
}
function numberKey(e, input) {
  if (e.key === 'Enter') { e.preventDefault(); if (commitNumber(input)) advance(); return true; }
  if (e.key === 'Tab') { e.preventDefault(); commitNumber(input); focus = (focus + (e.shiftKey ? FIELDS.length - 1 : 1)) % FIELDS.length; renderBar(); return true; }
  if (e.key === 'Escape') { input.blur(); return false; }
  return false;
}

// ---- the labelling controls above the table ----
function setAnnotator(name) {
  store.annotator = name.trim();
  document.querySelectorAll('.lb-who').forEach((w) => { if (w.value !== name) w.value = name; });
  save();
  showCounts();
  P.drawRows();
  if (cur && S.openIdx >= 0) {  // another annotator's labels now: redraw the values, not the name box being typed in
    const bar = document.getElementById('labelbar');
    const v = valuesOf(S.keys[cur.i]);
    if (bar) bar.querySelectorAll('.lb-field').forEach((row) => {
      const f = FIELDS[+row.dataset.f];
      row.querySelectorAll('.lb-val').forEach((b) => b.classList.toggle('on', isSet(v, f) && v[f.name] === f.values[+b.dataset.v]));
      const num = row.querySelector('.lb-num');
      if (num) num.value = isSet(v, f) ? String(v[f.name]) : '';
    });
  }
}
function describe(f) {
  if (f.type === 'number') return `${esc(f.name)} (a number)`;
  return `${esc(f.name)} (${f.values.map((x, j) => keyed(f, j)).join(' ')})`;
}
function controls() {
  return `<div id="labelling"><div><b>Labelling</b> ${FIELDS.map(describe).join(' · ')}</div>` +
    `<div class="lb-row">annotator <input id="lb-who" class="lb-who" size="14" placeholder="your name" value="${esc(store.annotator)}">` +
    ` <b class="lb-count"></b>` +
    ` <select id="lb-show"><option value="">all records</option><option value="unlabelled">not fully labelled</option><option value="labelled">labelled</option></select>` +
    ` <label><input type="checkbox" id="lb-random"${store.random ? ' checked' : ''}> seeded random order</label> seed <input id="lb-seed" size="6" value="${esc(store.seed)}">` +
    ` <label><input type="checkbox" id="lb-blind"${store.blind ? ' checked' : ''}> hide metric values (blind review)</label>` +
    ` <label><input type="checkbox" id="lb-advance"${store.advance ? ' checked' : ''}> move on after each label</label>` +
    ` <button type="button" id="lb-start">label: first unlabelled (u)</button> <button type="button" id="lb-download">Download labels</button></div>` +
    `<div class="lb-keys muted">keys in an opened record: ${esc(KEYS_HELP)}</div><div id="lb-note"></div></div>`;
}
function setup() {
  const $ = (id) => document.getElementById(id);
  $('lb-show').value = store.show || '';
  $('lb-who').addEventListener('input', (e) => setAnnotator(e.target.value));
  $('lb-show').addEventListener('change', (e) => { store.show = e.target.value; save(); P.applyView(); });
  $('lb-random').addEventListener('change', (e) => { store.random = e.target.checked; if (store.random) S.sort = null; save(); P.applyView(); });
  $('lb-seed').addEventListener('input', (e) => { store.seed = e.target.value; save(); if (store.random) P.applyView(); });
  $('lb-blind').addEventListener('change', (e) => { store.blind = e.target.checked; save(); document.body.classList.toggle('blind', store.blind); });
  $('lb-advance').addEventListener('change', (e) => { store.advance = e.target.checked; save(); });
  $('lb-start').addEventListener('click', () => move(1, true));
  $('lb-download').addEventListener('click', download);
  document.body.classList.toggle('blind', store.blind);
  if (store.random || store.show) P.applyView();
  showCounts();
  note();
}

// ---- the table: a labels column, the "show" filter, the seeded order ----
function columns() {
  return [{head: 'labels', cell: (i) => {
    const k = S.keys[i];
    const v = valuesOf(k), set = FIELDS.filter((f) => isSet(v, f));
    if (!set.length) return '';
    return `<span class="${set.length === FIELDS.length ? 'good' : 'warn'}">${set.length === FIELDS.length ? '✓' : '◐'} ` +
      set.map((f) => esc(shown(f, v[f.name]))).join(' · ') + '</span>';
  }}];
}
function filter(i) {
  if (!store.show) return true;
  const k = S.keys[i];
  return k !== null && (store.show === 'labelled' ? full(k) : !full(k));
}
// A 53-bit hash of the seed and a record's key (cyrb53): the same seed gives the same order on every machine,
// and the replications of a record stay together.
function hash(s) {
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let j = 0; j < s.length; j++) { const c = s.charCodeAt(j); h1 = Math.imul(h1 ^ c, 2654435761); h2 = Math.imul(h2 ^ c, 1597334677); }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
function order(list) {
  if (!store.random) return null;
  const rank = new Map();
  for (const i of list) rank.set(i, hash(store.seed + '\u0000' + (S.keys[i] === null ? '#' + i : S.keys[i])));
  return list.slice().sort((a, b) => rank.get(a) - rank.get(b) || a - b);
}

// ---- Download labels: one line per labelled record, in the data set's order ----
function download() {
  if (!store.annotator) { askName(); return; }
  const m = mine();
  const ks = Object.keys(m).sort((a, b) => (firstOfKey.has(a) ? firstOfKey.get(a) : Infinity) - (firstOfKey.has(b) ? firstOfKey.get(b) : Infinity));
  let text = '', n = 0;
  for (const k of ks) {
    const line = {[KEY]: m[k].k, [WHO]: store.annotator};
    for (const f of FIELDS) if (isSet(m[k].v, f)) line[f.name] = m[k].v[f.name];
    text += JSON.stringify(line) + '\n';
    n++;
  }
  if (!n) { note('nothing labelled yet'); return; }
  const a = el('a', {href: URL.createObjectURL(new Blob([text], {type: 'application/x-ndjson'})), download: `labels-${store.annotator.replace(/[^\w.-]+/g, '_')}.jsonl`});
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  note(`downloaded ${n} labelled records as ${a.download}`);
}

P.register({record, ready, controls, setup, columns, filter, order, drill, key});
})();
