// "LLM providers" (docs/llm-providers.md): how fast each provider was driven. From eg-final's llm.<provider>.rate
// (concurrency min/median/max, what held the calls back, 429s, time waiting for capacity) a small table, and from
// llm_rate_timeline.<provider> (rows of t_s, in_flight, window, answers, http_429; answers and 429s counted from
// the start) two charts over the run's time: calls in flight with the window, 429s marked; answers per second.
// Registers with report.js (window.evalgraphPage); nothing is shown for a run without LLM calls, or a merged
// run (its shards' timelines are in their own reports).
(function () {
const P = window.evalgraphPage;
const F = P && P.FINAL;
const LLM = F && F.llm && typeof F.llm === 'object' ? F.llm : null;
const TL = F && F.llm_rate_timeline && typeof F.llm_rate_timeline === 'object' ? F.llm_rate_timeline : null;
if (!LLM || !TL) return;
const {esc, el} = P;
const num = (v) => typeof v === 'number' && Number.isFinite(v);
const provs = Object.keys(LLM).filter((p) => LLM[p] && num(LLM[p].calls) && LLM[p].calls > 0 && LLM[p].rate && typeof LLM[p].rate === 'object');
if (!provs.length) return;

const HELD = {none: 'nothing (fewer calls ready than the window)', demand: 'nothing', ceiling: 'the ceiling (max_in_flight)',
  latency: 'latency (the adaptive window)', requests: 'the requests limit', tokens: 'the tokens limit', refusals: 'refusals (the cap after 429s or 503s)'};
const s1 = (v) => num(v) ? v.toFixed(1) : '–';

// The timeline's rows as columns, whatever order the columns come in; null without rows.
function series(t) {
  if (!t || !Array.isArray(t.rows) || !t.rows.length || !Array.isArray(t.columns)) return null;
  const col = (name) => { const k = t.columns.indexOf(name); return t.rows.map((r) => (k >= 0 && num(r[k]) ? r[k] : 0)); };
  const s = {t: col('t_s'), inflight: col('in_flight'), window: col('window'), answers: col('answers'), r429: col('http_429')};
  // Per interval between two rows: answers per second and the 429s that came in it.
  s.rate = [];
  s.refused = [];
  for (let i = 1; i < s.t.length; i++) {
    const dt = s.t[i] - s.t[i - 1];
    s.rate.push(dt > 0 ? Math.max(0, s.answers[i] - s.answers[i - 1]) / dt : 0);
    s.refused.push(Math.max(0, s.r429[i] - s.r429[i - 1]));
  }
  return s;
}

// A step of 1, 2 or 5 times a power of ten that splits [0, max] into about n parts.
function step(max, n) {
  const raw = max / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}
const tick = (v) => (Math.abs(v) >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(v < 1 ? 2 : 1));

// One chart's frame: y grid and labels from 0 to yMax, x axis in seconds from 0 to tMax; returns the SVG start,
// the coordinate functions and the closing tag. title and desc name the chart for screen readers.
function frame(id, title, desc, yMax, tMax, yLabel) {
  const W = 720, H = 160, L = 44, R = 10, T = 20, B = 26;
  const x = (t) => L + (tMax > 0 ? t / tMax : 0) * (W - L - R), y = (v) => T + (1 - v / yMax) * (H - T - B);
  let s = `<svg class="rate" width="100%" viewBox="0 0 ${W} ${H}" preserveAspectRatio="xMinYMin meet" style="max-width:${W}px" role="img" ` +
    `aria-labelledby="${id}-t ${id}-d"><title id="${id}-t">${esc(title)}</title><desc id="${id}-d">${esc(desc)}</desc>`;
  const ys = step(yMax, 4);
  for (let i = 0, v = 0; v <= yMax * (1 + 1e-9); v = ++i * ys) s += `<line class="grid" x1="${L}" x2="${W - R}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/><text x="${L - 4}" y="${(y(v) + 3).toFixed(1)}" text-anchor="end">${tick(v)}</text>`;
  const xs = step(tMax || 1, 6);
  for (let i = 0, t = 0; t <= tMax * (1 + 1e-9); t = ++i * xs) s += `<line class="axis" x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${H - B}" y2="${H - B + 4}"/><text x="${x(t).toFixed(1)}" y="${H - B + 15}" text-anchor="middle">${tick(t)} s</text>`;
  s += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/><text x="2" y="10" class="ylabel">${esc(yLabel)}</text>`;
  return {s, x, y, top: T, bottom: H - B, end: '</svg>'};
}

const pts = (xs, ys, x, y) => xs.map((t, i) => `${x(t).toFixed(1)},${y(ys[i]).toFixed(1)}`).join(' ');

// Calls in flight (a line) and the window (a dashed step line), the intervals with 429s marked at the top.
function concurrencyChart(p, k, s, rate) {
  const tMax = s.t[s.t.length - 1], top = Math.max(1, ...s.inflight, ...s.window);
  const yMax = step(top, 4) * Math.ceil(top / step(top, 4));
  const c = rate.concurrency || {}, refused = s.refused.reduce((a, b) => a + b, 0);
  const f = frame(`llm-c${k}`, `Calls in flight and window of ${p} over the run`,
    `Calls in flight min ${c.min}, median ${c.median}, max ${c.max}; window at the end ${rate.window}; ${refused} answers refused with HTTP 429 over ${s1(tMax)} s.`,
    yMax, tMax, 'calls');
  let h = f.s;
  const win = [];
  s.t.forEach((t, i) => { if (i) win.push([t, s.window[i - 1]]); win.push([t, s.window[i]]); });
  h += `<polyline class="window" points="${pts(win.map((w) => w[0]), win.map((w) => w[1]), f.x, f.y)}"/>`;
  h += `<polyline class="inflight" points="${pts(s.t, s.inflight, f.x, f.y)}"/>`;
  s.refused.forEach((n, i) => {
    if (!n) return;
    const x0 = f.x(s.t[i]), x1 = f.x(s.t[i + 1]);
    h += `<rect class="r429" x="${x0.toFixed(1)}" y="${f.top}" width="${Math.max(2, x1 - x0).toFixed(1)}" height="${f.bottom - f.top}">` +
      `<title>${n} × 429 between ${s1(s.t[i])} s and ${s1(s.t[i + 1])} s</title></rect>`;
  });
  return h + f.end;
}

// Answers per second in each interval, as bars.
function throughputChart(p, k, s) {
  const tMax = s.t[s.t.length - 1], top = Math.max(0, ...s.rate) || 1;
  const yMax = step(top, 4) * Math.ceil(top / step(top, 4));
  const total = s.answers[s.answers.length - 1], mean = tMax > 0 ? total / tMax : 0;
  const f = frame(`llm-r${k}`, `Answers per second from ${p} over the run`,
    `${total} answers in ${s1(tMax)} s: ${s1(mean)} per second on average, at most ${s1(Math.max(0, ...s.rate))} per second in an interval.`,
    yMax, tMax, 'answers/s');
  let h = f.s;
  s.rate.forEach((r, i) => {
    const x0 = f.x(s.t[i]), x1 = f.x(s.t[i + 1]), y0 = f.y(r);
    h += `<rect class="tp" x="${(x0 + 0.5).toFixed(1)}" y="${y0.toFixed(1)}" width="${Math.max(0.5, x1 - x0 - 1).toFixed(1)}" height="${(f.bottom - y0).toFixed(1)}">` +
      `<title>${s1(s.t[i])}–${s1(s.t[i + 1])} s: ${s1(r)} answers/s</title></rect>`;
  });
  return h + f.end;
}

function summaryTable(S) {
  let h = '<table id="llm-rate"><tr><th>provider</th><th>concurrency min / median / max</th><th>window</th><th>held back by</th>' +
    '<th class="n">429</th><th class="n">503</th><th class="n">waiting for capacity (s)</th><th class="n">answers/s</th></tr>';
  provs.forEach((p) => {
    const r = LLM[p].rate, c = r.concurrency || {}, held = r.held_s || {}, s = S[p];
    const lim = typeof r.limit === 'string' ? r.limit : 'none';
    const secs = num(held[lim]) && lim !== 'none' ? ` for ${s1(held[lim])} s` : '';
    const tp = s && s.t[s.t.length - 1] > 0 ? s1(s.answers[s.answers.length - 1] / s.t[s.t.length - 1]) : '–';
    h += `<tr data-provider="${esc(p)}"><td><b>${esc(p)}</b></td><td data-k="concurrency">${c.min} / ${c.median} / ${c.max}</td>` +
      `<td>${r.adaptive === false ? 'fixed, ' + esc(r.ceiling) : 'adaptive, ceiling ' + esc(r.ceiling)}</td>` +
      `<td data-k="limit" title="${esc(Object.keys(held).map((k) => k + ' ' + s1(held[k]) + ' s').join(', '))}">${esc(HELD[lim] || lim)}${secs}</td>` +
      `<td class="n${r.http_429 > 0 ? ' bad' : ''}" data-k="http_429">${esc(r.http_429)}</td><td class="n${r.http_503 > 0 ? ' bad' : ''}">${esc(r.http_503)}</td>` +
      `<td class="n" data-k="capacity_wait_s">${s1(r.capacity_wait_s)}</td><td class="n">${tp}</td></tr>`;
  });
  return h + '</table>';
}

function section() {
  const sec = el('section', {id: 'llm-providers', 'data-nav': 'LLM providers'});
  const S = Object.fromEntries(provs.map((p) => [p, series(TL[p])]));
  let h = '<h2>LLM providers</h2><p class="muted">How fast each provider was driven: calls in flight at once, the window that bounded them, ' +
    'what held them back longest (hover for the seconds each held them), answers refused with HTTP 429 and the time calls waited for capacity. ' +
    'run.json has the same figures under <code>llm.&lt;provider&gt;.rate</code> and <code>llm_rate_timeline</code>.</p>' + summaryTable(S);
  provs.forEach((p, k) => {
    const s = S[p];
    h += `<div class="llm-prov" data-provider="${esc(p)}"><h3>${esc(p)}</h3>`;
    if (!s || s.t.length < 2) {
      h += '<p class="muted">no timeline: too few calls went to the server (the cache or a shared identical call answered the rest)</p></div>';
      return;
    }
    h += '<div class="legend"><span class="sw inflight"></span>calls in flight <span class="sw window"></span>window <span class="sw r429"></span>interval with 429s</div>' +
      concurrencyChart(p, k, s, LLM[p].rate) + '<div class="legend"><span class="sw tp"></span>answers per second</div>' + throughputChart(p, k, s) + '</div>';
  });
  sec.innerHTML = h;
  return sec;
}

P.register({section});
})();
