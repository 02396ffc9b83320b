// "Agreement with people" (eg-final's agreement; docs/agreement.md): per agreement: entry its statistics with
// their 95 % intervals and methods, the people's own agreement beside it (each annotator against the rest in
// the same statistic, and Krippendorff's alpha of the label field), the confusion matrix (a click on a cell
// shows its records in the table) and the records where metric and label disagree most (a click opens one).
// Registers with report.js (window.evalgraphPage); nothing happens when the run measured no agreement.
(function () {
const P = window.evalgraphPage;
const A = P && P.FINAL.agreement;
if (!A || typeof A !== 'object' || !Array.isArray(A.entries)) return;
const {S, esc, fmt, el} = P;

const STAT_NAMES = {accuracy: 'accuracy', balanced_accuracy: 'balanced accuracy', kappa: "Cohen's κ", weighted_kappa: 'κ, quadratic weights',
  precision: 'precision', recall: 'recall', f1: 'F1', auroc: 'AUROC', balanced_accuracy_cv: 'balanced accuracy, 5-fold CV threshold',
  spearman: "Spearman's ρ", kendall: "Kendall's τ-b", pearson: "Pearson's r", alpha: "Krippendorff's α"};
const STAT_ORDER = Object.keys(STAT_NAMES);
// Statistics that reach below 0 (chance-corrected or correlations) are drawn on [-1, 1], the rest on [0, 1].
const SIGNED = new Set(['kappa', 'weighted_kappa', 'spearman', 'kendall', 'pearson', 'alpha']);
const KINDS = {classification: 'classification', score_vs_binary: 'score against a binary label', correlation: 'correlation'};
const num = (v) => typeof v === 'number' && Number.isFinite(v);
const f3 = (v) => num(v) ? v.toFixed(3) : '–';

// A statistic: "0.812 [0.720, 0.870]" with its method as a tooltip, or "not defined: why".
function statText(st) {
  if (!st || typeof st !== 'object') return '<span class="muted">–</span>';
  if (st.defined === false || !num(st.value))
    return `<span class="undef" title="${esc(st.method || '')}">not defined: ${esc(st.why || 'no value')}</span>`;
  const iv = num(st.low) && num(st.high) ? ` <span class="muted">[${f3(st.low)}, ${f3(st.high)}]</span>` : '';
  return `<span title="${esc((st.method ? '95 % interval: ' + st.method : 'no interval') + (num(st.n) ? ' · n ' + st.n : ''))}"><b>${f3(st.value)}</b>${iv}</span>`;
}

// A small interval bar: the value as a dot, its interval as a line, marks (the people's mean) as ticks.
function bar(st, signed, marks) {
  const W = 140, H = 14, lo = signed ? -1 : 0, x = (v) => (Math.max(lo, Math.min(1, v)) - lo) / (1 - lo) * (W - 8) + 4;
  let s = `<svg class="ivbar" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" aria-hidden="true"><line x1="4" x2="${W - 4}" y1="${H / 2}" y2="${H / 2}" class="axis"/>`;
  if (signed) s += `<line x1="${x(0)}" x2="${x(0)}" y1="2" y2="${H - 2}" class="axis"/>`;
  for (const m of marks || []) if (num(m.v)) s += `<line x1="${x(m.v)}" x2="${x(m.v)}" y1="0" y2="${H}" class="mark"><title>${esc(m.t)}</title></line>`;
  if (st && st.defined !== false && num(st.value)) {
    if (num(st.low) && num(st.high)) s += `<line x1="${x(st.low)}" x2="${x(st.high)}" y1="${H / 2}" y2="${H / 2}" class="iv"/>`;
    s += `<circle cx="${x(st.value)}" cy="${H / 2}" r="3.5" class="pt"/>`;
  }
  return s + '</svg>';
}

function statsTable(e) {
  const stats = e.stats || {};
  const keys = STAT_ORDER.filter((k) => k in stats).concat(Object.keys(stats).filter((k) => !STAT_ORDER.includes(k)));
  const people = e.people && typeof e.people === 'object' ? e.people : null;
  let h = '<table class="agree-stats"><tr><th>statistic</th><th>value [95 % interval]</th><th></th><th class="n">n</th><th>method</th></tr>';
  for (const k of keys) {
    const st = stats[k] || {};
    const marks = people && people.stat === k && num(people.mean) ? [{v: people.mean, t: `people: mean ${f3(people.mean)} (each annotator against the rest)`}] : [];
    h += `<tr data-stat="${esc(k)}"><td>${esc(STAT_NAMES[k] || k)}</td><td>${statText(st)}</td><td>${bar(st, SIGNED.has(k), marks)}</td>` +
      `<td class="n">${num(st.n) ? st.n : ''}</td><td class="muted">${esc(st.method || '')}</td></tr>`;
  }
  return h + '</table>';
}

// The people's ceiling: each annotator against the rest in the statistic the metric is judged by, their mean,
// a sentence comparing the metric with it, and alpha among the people for this label field.
function peopleBlock(e) {
  const p = e.people;
  const alpha = A.alpha && A.alpha[e.label];
  let h = '<div class="people"><h4>People among themselves</h4>';
  if (!p || typeof p !== 'object') {
    h += '<p class="muted">one annotator per record: the people\'s own agreement cannot be measured.</p>';
  } else {
    const name = STAT_NAMES[p.stat] || p.stat;
    h += `<p class="muted">${fmt(p.annotators)} annotators, each compared with the rest (${esc(name)})</p><table class="per-annotator"><tr><th>annotator</th><th class="n">n</th><th>${esc(name)} [95 %]</th></tr>`;
    for (const a of p.per_annotator || [])
      h += `<tr><td>${esc(a.annotator)}</td><td class="n">${fmt(a.n)}</td><td>${statText(Object.assign({defined: a.defined !== false && num(a.value)}, a))}</td></tr>`;
    h += `<tr class="total"><td>mean</td><td></td><td><b>${f3(p.mean)}</b></td></tr></table>`;
    const m = (e.stats || {})[p.stat];
    if (m && m.defined !== false && num(m.value) && num(p.mean)) {
      const verdict = num(m.high) && m.high < p.mean ? 'agrees with people <b class="bad">less well</b> than they agree with each other (its interval lies below their mean)'
        : num(m.low) && m.low > p.mean ? 'agrees with people <b class="good">better</b> than they agree with each other (its interval lies above their mean)'
          : 'agrees with people <b>about as well</b> as they agree with each other (their mean lies within its interval)';
      h += `<p class="verdict">${esc(e.metric)}: ${esc(name)} ${f3(m.value)} — it ${verdict}.</p>`;
    }
  }
  if (alpha) h += `<p>Krippendorff's α (${esc(alpha.level || '')}) among ${fmt(alpha.annotators)} annotators over ${fmt(alpha.units)} records: ${statText(alpha)}</p>`;
  return h + '</div>';
}

function confusionTable(e, idx) {
  const cats = e.categories, m = e.confusion;
  if (!Array.isArray(cats) || !Array.isArray(m) || !m.length) return '';
  const total = m.reduce((a, row) => a + row.reduce((b, c) => b + c, 0), 0) || 1;
  let h = `<div class="confusion"><h4>Confusion matrix</h4><table class="confusion" data-entry="${idx}"><tr><th class="corner">${esc(e.metric)} ↓ · ${esc(e.label)} →</th>` +
    cats.map((c) => `<th class="n">${esc(c)}</th>`).join('') + '<th class="n">all</th></tr>';
  m.forEach((row, r) => {
    h += `<tr><th>${esc(cats[r] ?? r)}</th>`;
    row.forEach((c, col) => {
      const ids = (e.cells || {})[r + ',' + col] || [];
      const shade = Math.min(0.85, 0.12 + 0.9 * c / total);
      const cls = r === col ? 'diag' : 'off';
      h += `<td class="n cell ${cls}${ids.length ? ' click' : ''}" data-cell="${r},${col}" style="--a:${c ? shade.toFixed(2) : 0}" title="metric ${esc(cats[r] ?? r)}, label ${esc(cats[col] ?? col)}: ${c} records${ids.length ? ' (click to list them' + (ids.length < c ? `; the first ${ids.length}` : '') + ')' : ''}">${c}</td>`;
    });
    h += `<td class="n muted">${row.reduce((a, b) => a + b, 0)}</td></tr>`;
  });
  h += '<tr><th class="muted">all</th>' + cats.map((_, col) => `<td class="n muted">${m.reduce((a, row) => a + (row[col] || 0), 0)}</td>`).join('') + `<td class="n muted">${total}</td></tr>`;
  return h + '</table></div>';
}

function disagreementsTable(e) {
  const d = Array.isArray(e.disagreements) ? e.disagreements : [];
  if (!d.length) return '<h4>Disagreements</h4><p class="muted">none: metric and label agree on every record compared.</p>';
  let h = `<h4>Where metric and label disagree most (${d.length}${d.length >= 50 ? ', the first 50' : ''})</h4><div class="scrollbox"><table class="disagreements"><tr><th>record</th><th>metric</th><th>label</th><th class="n">distance</th></tr>`;
  for (const x of d)
    h += `<tr data-key="${esc(x.id)}"><td><a href="#" class="open-key">${esc(x.id)}</a></td><td>${fmt(x.metric, 4)}</td><td>${fmt(x.label, 4)}</td><td class="n">${fmt(x.distance, 4)}</td></tr>`;
  return h + '</table></div>';
}

function entryBlock(e, idx) {
  const lo = e.left_out || {};
  const why = [['metric_missing', 'without a metric value'], ['unlabelled', 'without a label'], ['tie', 'tied among annotators'], ['off_scale', "off the label's scale"]]
    .filter(([k]) => lo[k]).map(([k, t]) => `${lo[k]} ${t}`);
  let h = `<div class="agree-entry" data-name="${esc(e.name)}"><h3>${esc(e.name)} <span class="muted">${esc(e.metric)} against the label <b>${esc(e.label)}</b> (${esc(e.label_type || '')}) · ${esc(KINDS[e.kind] || e.kind || '')}</span></h3>` +
    `<p>n ${fmt(e.n)} records compared${why.length ? ' · left out: ' + why.join(', ') : ''}${e.positive !== undefined && e.positive !== null ? ' · positive: ' + fmt(e.positive) : ''}` +
    `${num(e.threshold) ? ' · threshold ' + fmt(e.threshold, 4) + ' (maximises balanced accuracy)' : ''}</p>`;
  h += `<div class="agree-grid"><div>${statsTable(e)}</div>${peopleBlock(e)}</div>`;
  h += `<div class="agree-grid">${confusionTable(e, idx)}<div>${disagreementsTable(e)}</div></div>`;
  return h + '</div>';
}

function labelsLine() {
  const l = A.labels || {};
  const parts = [];
  if (l.source) parts.push(`labels from <code>${esc(l.source)}</code>`);
  if (num(l.labelled) && num(l.records)) parts.push(`${l.labelled} of ${l.records} records labelled`);
  if (l.unlabelled) parts.push(`${l.unlabelled} without a label`);
  if (l.unknown_keys) parts.push(`<span class="warn">${l.unknown_keys} labels for records not in the data set</span>`);
  if (Array.isArray(l.annotators) && l.annotators.length) parts.push(`annotators: ${l.annotators.map(esc).join(', ')}`);
  return parts.length ? `<p>${parts.join(' · ')}</p>` : '';
}

function alphaTable() {
  const al = A.alpha && typeof A.alpha === 'object' ? A.alpha : {};
  const fields = Object.keys(al);
  if (!fields.length) return '';
  let h = '<h3>People among themselves: Krippendorff\'s α per label field</h3><table id="alpha-table"><tr><th>label</th><th>level</th><th class="n">annotators</th><th class="n">records</th><th>α [95 % interval]</th><th></th><th>method</th></tr>';
  for (const f of fields) {
    const a = al[f] || {};
    h += `<tr data-label="${esc(f)}"><td><b>${esc(f)}</b></td><td>${esc(a.level || '')}</td><td class="n">${fmt(a.annotators)}</td><td class="n">${fmt(a.units)}</td><td>${statText(a)}</td><td>${bar(a, true)}</td><td class="muted">${esc(a.method || '')}</td></tr>`;
  }
  return h + '</table>';
}

// The first record with a key (a disagreement names records by their key).
let firstByKey = null;
function recordOfKey(k) {
  if (!firstByKey) { firstByKey = new Map(); S.keys.forEach((key, i) => { if (key !== null && !firstByKey.has(key)) firstByKey.set(key, i); }); }
  return firstByKey.get(String(k));
}

function section() {
  const sec = el('section', {id: 'people-agreement', 'data-nav': 'Agreement with people'});
  sec.innerHTML = '<h2>Agreement with people</h2><p class="muted">How well each metric agrees with the human labels, with 95 % intervals (hover a figure for its method). ' +
    'Beside it, how well the people agree with each other: a metric cannot be expected to agree with people better than they agree among themselves.</p>' +
    labelsLine() + (A.entries.length ? A.entries.map(entryBlock).join('') : '<p class="muted">no agreement: entries in the pipeline.</p>') + alphaTable();
  sec.addEventListener('click', (ev) => {
    const cell = ev.target.closest('td.cell.click');
    if (cell) {
      const e = A.entries[+cell.closest('table').dataset.entry];
      const [r, c] = cell.dataset.cell.split(',').map(Number);
      P.showRecords(e.cells[cell.dataset.cell], `${e.name}: metric ${e.categories[r]}, label ${e.categories[c]} (${e.cells[cell.dataset.cell].length} records)`);
      return;
    }
    const a = ev.target.closest('a.open-key');
    if (a) {
      ev.preventDefault();
      const i = recordOfKey(a.closest('tr').dataset.key);
      if (i !== undefined) P.openRecord(i);
    }
  });
  return sec;
}

P.register({section});
})();
