// The browser half of labelling_test.sh (puppeteer-core from the npm cache the script names).
//   node labelling_test.mjs browse REPORT DOWNLOAD_DIR CHROMIUM NPM_DIR [SCREENSHOT_DIR]
//     opens REPORT in headless Chromium and labels records as a reviewer would, checking every step
//     ("ok"/"FAIL" lines; exit 1 on a failure); the download lands in DOWNLOAD_DIR/labels-tester.jsonl.
//   node labelling_test.mjs patch REPORT LABELS OUT NPM_DIR
//     for an engine that does not read labels: yet: REPORT with what such an engine writes into it (the
//     sink's _run.labels, each record's _labels from LABELS, an eg-final agreement), written to OUT.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import {createRequire} from 'node:module';

const [mode, ...args] = process.argv.slice(2);
let failed = 0;
const check = (what, ok, detail) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${!ok && detail !== undefined ? ': ' + detail : ''}`); if (!ok) failed++; };

const FIELDS = {faithful: {type: 'binary'}, quality: {type: 'ordinal', values: [1, 2, 3, 4, 5]},
  topic: {type: 'category', values: ['billing', 'outage', 'other']}, score: {type: 'number'}};

// ---- patch: the report as an engine with labels: writes it (the data contracts of issue #36) ----
function scriptJson(html, id) {
  const m = new RegExp(`<script type="application/json" id="${id}">(.*?)</script>`).exec(html);
  return m ? JSON.parse(m[1]) : null;
}
const asScript = (v) => JSON.stringify(v).replace(/</g, '\\u003c');
function setScript(html, id, v) {
  return html.replace(new RegExp(`(<script type="application/json" id="${id}">)(.*?)(</script>)`), (_, a, __, c) => a + asScript(v) + c);
}
function wilson(k, n) {
  const z = 1.96, p = k / n, c = (p + z * z / (2 * n)) / (1 + z * z / n), w = z * Math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  return {defined: true, value: p, low: c - w, high: c + w, method: 'Wilson score', n};
}
function patch(report, labelsFile, out) {
  let html = fs.readFileSync(report, 'utf8');
  const chunks = [...html.matchAll(/<script type="application\/octet-stream" class="eg-z">([^<]*)<\/script>\n/g)];
  const recs = zlib.gunzipSync(Buffer.concat(chunks.map((m) => Buffer.from(m[1], 'base64')))).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const given = {};
  for (const l of fs.readFileSync(labelsFile, 'utf8').split('\n').filter(Boolean).map((x) => JSON.parse(x)))
    for (const f of Object.keys(FIELDS)) if (f in l) ((given[l.id] = given[l.id] || {})[f] = given[l.id][f] || []).push({annotator: l.rater, value: l[f]});
  for (const r of recs) if (given[r.id]) r._labels = given[r.id];
  const z = zlib.gzipSync(recs.map((r) => JSON.stringify(r)).join('\n') + '\n').toString('base64');
  html = html.replace(chunks[0][0], `<script type="application/octet-stream" class="eg-z">${z}</script>\n`);
  for (const m of chunks.slice(1)) html = html.replace(m[0], '');
  const run = scriptJson(html, 'eg-run');
  run.labels = {key: 'id', annotator: 'rater', path: 'labels.jsonl', fields: FIELDS};
  html = setScript(html, 'eg-run', run);
  const fin = scriptJson(html, 'eg-final') || {};
  fin.agreement = agreement(recs, given);
  html = setScript(html, 'eg-final', fin);
  fs.writeFileSync(out, html);
}
// A classification entry computed from the records (majority of the raters; a tie is left out), a score
// entry and a correlation entry with fixed figures: enough for the page to show every part.
function agreement(recs, given) {
  const cats = ['false', 'true'], conf = [[0, 0], [0, 0]], cells = {}, dis = [];
  let tie = 0, unl = 0, hits = 0;
  for (const r of recs) {
    const g = (given[r.id] || {}).faithful;
    if (!g) { unl++; continue; }
    const yes = g.filter((x) => x.value).length, no = g.length - yes;
    if (yes === no) { tie++; continue; }
    const lab = yes > no ? 1 : 0, met = r.judge.verdict ? 1 : 0;
    conf[met][lab]++;
    (cells[met + ',' + lab] = cells[met + ',' + lab] || []).push(r.id);
    if (met === lab) hits++; else dis.push({id: r.id, metric: r.judge.verdict, label: !!lab, distance: 1});
  }
  const n = conf.flat().reduce((a, b) => a + b, 0);
  return {labels: {source: 'labels.jsonl', records: recs.length, labelled: 8, unlabelled: recs.length - 8, unknown_keys: 0, annotators: ['ann1', 'ann2']},
    entries: [
      {name: 'judge.verdict~faithful', metric: 'judge.verdict', label: 'faithful', kind: 'classification', label_type: 'binary', positive: true, n,
        left_out: {metric_missing: 0, unlabelled: unl, tie, off_scale: 0},
        stats: {accuracy: wilson(hits, n), kappa: {defined: true, value: 0.2, low: -0.4, high: 0.8, method: 'bootstrap (fixture)', n},
          balanced_accuracy_cv: {defined: false, why: 'fewer than 5 records of each class', n}},
        categories: cats, confusion: conf, cells,
        people: {annotators: 2, stat: 'kappa', per_annotator: [{annotator: 'ann1', n: 8, value: 0.3, low: -0.2, high: 0.8}, {annotator: 'ann2', n: 8, value: 0.3, low: -0.2, high: 0.8}], mean: 0.3},
        disagreements: dis},
      {name: 'judge.score~faithful', metric: 'judge.score', label: 'faithful', kind: 'score_vs_binary', label_type: 'binary', positive: true, n, threshold: 0.42,
        left_out: {metric_missing: 0, unlabelled: unl, tie, off_scale: 0},
        stats: {auroc: {defined: true, value: 0.61, low: 0.3, high: 0.92, method: 'DeLong (fixture)', n}}, people: null, disagreements: []},
      {name: 'judge.quality~quality', metric: 'judge.quality', label: 'quality', kind: 'correlation', label_type: 'ordinal', n: 8,
        left_out: {metric_missing: 0, unlabelled: 16, tie: 0, off_scale: 0},
        stats: {spearman: {defined: true, value: 0.35, low: -0.4, high: 0.8, method: 'Fisher z (fixture)', n: 8}, pearson: {defined: false, why: 'all equal', n: 8}},
        people: null, disagreements: [{id: 'q03', metric: 5, label: 1.5, distance: 3.5}]}],
    alpha: {quality: {level: 'ordinal', annotators: 2, units: 8, defined: true, value: 0.12, low: -0.3, high: 0.5, method: 'bootstrap (fixture)'},
      faithful: {level: 'nominal', annotators: 2, units: 8, defined: true, value: 0.05, low: -0.5, high: 0.6, method: 'bootstrap (fixture)'}}};
}

// ---- browse: a reviewer's session ----
async function browse(report, downloadDir, chromium, npmDir, shots) {
  const puppeteer = createRequire(path.join(npmDir, 'package.json'))('puppeteer-core');
  const browser = await puppeteer.launch({executablePath: chromium, headless: true, userDataDir: path.join(downloadDir, '..', 'profile'),
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--allow-file-access-from-files']});
  try {
    const page = await browser.newPage();
    await page.setViewport({width: 1400, height: 1000});
    const problems = [];
    page.on('pageerror', (e) => problems.push('page error: ' + e.message));
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.type() + ': ' + m.text()); });
    const url = 'file://' + path.resolve(report);
    const load = async () => { await page.goto(url); await page.waitForSelector('body[data-ready="true"]', {timeout: 30000}); };
    await load();
    const S = (expr) => page.evaluate(expr);
    const text = (sel) => page.$eval(sel, (e) => e.textContent).catch(() => null);
    const drillId = () => text('#drill.open #drill-id');
    const key = async (k, times = 1) => { for (let j = 0; j < times; j++) await page.keyboard.press(k); };
    const nRecords = await S(() => window.evalgraphReport.ids.length);
    const unfocus = () => page.evaluate(() => document.activeElement && document.activeElement.blur());

    // -- agreement with people --
    const final = await S(() => { const e = document.getElementById('eg-final'); return e ? JSON.parse(e.textContent) : {}; });
    const ag = final.agreement;
    check('eg-final has an agreement', !!(ag && ag.entries && ag.entries.length));
    if (ag && ag.entries) {
      check('the section "Agreement with people" with one block per entry', (await page.$$('#people-agreement .agree-entry')).length === ag.entries.length);
      check('the nav links to it', !!(await page.$('nav a[href="#people-agreement"]')));
      const cls = ag.entries.find((e) => e.confusion && Object.values(e.cells || {}).some((c) => c.length));
      if (cls) {
        const [cell, ids] = Object.entries(cls.cells).find(([, c]) => c.length);
        await page.click(`#people-agreement .agree-entry[data-name="${cls.name}"] td.cell[data-cell="${cell}"]`);
        const shown = await S(() => Array.from(window.evalgraphReport.view).map((i) => window.evalgraphReport.keys[i]));
        check(`a click on confusion cell ${cell} shows its ${ids.length} records`, JSON.stringify([...shown].sort()) === JSON.stringify([...ids].map(String).sort()), shown.join(','));
        check('… and says so above the table', /records\)/.test(await text('#id-filter')));
        await page.click('#id-filter button');
        check('… and × shows all records again', (await text('#count')).startsWith(`${nRecords} of ${nRecords}`), await text('#count'));
      }
      const undef = ag.entries.some((e) => Object.values(e.stats || {}).some((s) => s.defined === false));
      if (undef) check('an undefined statistic reads "not defined: <why>"', /not defined: \S/.test(await text('#people-agreement')));
      check('a statistic names its method (a tooltip)', !!(await page.$('#people-agreement .agree-stats span[title*="95 % interval"]')));
      const withDis = ag.entries.find((e) => (e.disagreements || []).length);
      if (withDis) {
        await page.click(`#people-agreement .agree-entry[data-name="${withDis.name}"] a.open-key`);
        check(`a click on the first disagreement opens record ${withDis.disagreements[0].id}`, (await drillId()) === String(withDis.disagreements[0].id), await drillId());
        await key('Escape');
      }
      if (shots) await (await page.$('#people-agreement')).screenshot({path: path.join(shots, 'agreement.png')});
    }

    // -- labelling: the name, then keys --
    check('the labelling controls are there', !!(await page.$('#labelling')));
    check('the counter starts at 0 of 24', (await text('#labelling .lb-count')) === '0 of 24 labelled', await text('#labelling .lb-count'));
    await page.click('#lb-who');
    await page.keyboard.type('tester');
    await key('Enter');
    await key('u');
    check('u opens the first unlabelled record (q01)', (await drillId()) === 'q01', await drillId());
    check('the label bar shows the labels given before, read-only', /given: ann1: yes, ann2: yes/.test(await text('#labelbar')), await text('#labelbar'));
    check('the keys are shown on the page', /Tab \/ Shift\+Tab/.test(await text('#labelbar .lb-keys')));
    await key('1'); await key('4'); await key('2');  // faithful yes, quality 4, topic outage
    check('the number field takes the focus for typing', await S(() => document.activeElement.classList.contains('lb-num')));
    await page.keyboard.type('0.5'); await key('Enter');
    check('all four fields set: on to q02', (await drillId()) === 'q02', await drillId());
    await key('n'); await key('2'); await key('3'); await page.keyboard.type('3'); await key('Enter');
    check('q02 labelled: on to q03', (await drillId()) === 'q03', await drillId());
    await key('y'); await key('Tab'); await key('1');  // faithful yes, skip quality, topic billing -> score
    await page.keyboard.type('-1.25'); await key('Enter');  // -> back to the skipped quality
    check('after the last field, the skipped one gets the focus', await S(() => document.querySelector('#labelbar .lb-field.focus .lb-name').textContent === 'quality'));
    await key('5');
    check('q03 labelled: on to q04', (await drillId()) === 'q04', await drillId());
    await page.click('#labelbar .lb-field[data-f="0"] button.lb-val[data-v="1"]');  // a click: faithful no
    check('a click sets a value and stays on the record', (await drillId()) === 'q04' && !!(await page.$('#labelbar .lb-field[data-f="0"] button.on[data-v="1"]')));
    await page.click('#labelbar .lb-field[data-f="1"] button.lb-val[data-v="1"]');  // quality 2
    await key('j');
    check('j moves on with q04 labelled in part', (await drillId()) === 'q05', await drillId());
    await key('1'); await key('k');
    check('k goes back to q04, its labels shown', (await drillId()) === 'q04' && !!(await page.$('#labelbar .lb-field[data-f="1"] button.on[data-v="1"]')));
    await key('ArrowRight');
    check('→ moves on to q05 again', (await drillId()) === 'q05', await drillId());
    await key('Tab', 3);  // the focus was on quality (the first field without a value): Tab x3 -> faithful
    await key('Backspace');
    check('Backspace clears the focused field (q05 has no label now)', !(await page.$('#labelbar button.on')));
    await key('Escape');
    check('the counter: 3 of 24 labelled, 1 partly', (await text('#labelling .lb-count')) === '3 of 24 labelled (1 partly)', await text('#labelling .lb-count'));

    // -- the seeded random order --
    const order = () => S(() => Array.from(window.evalgraphReport.view).map((i) => window.evalgraphReport.keys[i]).join(','));
    const natural = await order();
    await page.click('#lb-random');
    await page.click('#lb-seed', {clickCount: 3}); await page.keyboard.type('7');
    const seven = await order();
    check('seeded random order differs from the data set\'s', seven !== natural && seven.split(',').sort().join() === natural.split(',').sort().join());
    await page.click('#lb-seed', {clickCount: 3}); await page.keyboard.type('8');
    const eight = await order();
    check('another seed, another order', eight !== seven);
    await page.click('#lb-seed', {clickCount: 3}); await page.keyboard.type('7');
    await load();
    check('after a reload: the same seed, the same order', (await order()) === seven);
    await unfocus();
    await key('u');
    if ((await drillId()) === 'q04') await key('u');  // labelled in part: on to the next
    const first = await drillId();
    const firstUnlabelled = seven.split(',').find((k) => !['q01', 'q02', 'q03', 'q04'].includes(k));
    check(`u opens the first unlabelled record in that order (${firstUnlabelled})`, first === firstUnlabelled, first);
    await key('1'); await key('1'); await key('1'); await page.keyboard.type('2'); await key('Enter');
    if (shots) await page.screenshot({path: path.join(shots, 'labelling.png')});
    await key('Escape');
    await page.click('#lb-random');

    // -- blind review --
    await page.click('#lb-blind');
    await key('u');
    check('blind review hides the metric values (table and record)', await S(() => getComputedStyle(document.querySelector('#drill .node-out')).display === 'none' &&
      getComputedStyle(document.querySelector('#rtable td.mv')).display === 'none' && getComputedStyle(document.getElementById('metrics')).display === 'none'));
    if (shots) await page.screenshot({path: path.join(shots, 'blind.png')});
    await key('Escape');
    await page.click('#lb-blind');

    // -- reload: the labels are still there --
    await load();
    check('after a reload: 4 of 24 labelled, 1 partly', (await text('#labelling .lb-count')) === '4 of 24 labelled (1 partly)', await text('#labelling .lb-count'));
    check('after a reload: the annotator\'s name', (await page.$eval('#lb-who', (e) => e.value)) === 'tester');
    await page.evaluate(() => window.evalgraphPage.openRecord(0));
    check('after a reload: q01 shows yes, 4, outage, 0.5', await S(() => {
      const on = Array.from(document.querySelectorAll('#labelbar button.on')).map((b) => b.textContent.replace(/^\S+ /, '')).join('|');
      return on === 'yes|4|outage' && document.querySelector('#labelbar .lb-num').value === '0.5';
    }));
    check('the table has a labels column', /✓ yes · 4 · outage · 0.5/.test(await text('#rtable tbody')));
    await key('Escape');

    // -- Download labels --
    const cdp = await browser.target().createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', {behavior: 'allow', downloadPath: path.resolve(downloadDir), eventsEnabled: true});
    await page.click('#lb-download');
    const file = path.join(downloadDir, 'labels-tester.jsonl');
    for (let t = 0; t < 100 && !fs.existsSync(file); t++) await new Promise((r) => setTimeout(r, 100));
    const got = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const line = (id, v) => JSON.stringify(Object.assign({id, rater: 'tester'}, v));
    const want = [line('q01', {faithful: true, quality: 4, topic: 'outage', score: 0.5}), line('q02', {faithful: false, quality: 2, topic: 'other', score: 3}),
      line('q03', {faithful: true, quality: 5, topic: 'billing', score: -1.25}), line('q04', {faithful: false, quality: 2}),
      line(firstUnlabelled, {faithful: true, quality: 1, topic: 'billing', score: 2})];
    const order2 = (l) => l.split('\n').filter(Boolean).sort((a, b) => JSON.parse(a).id.localeCompare(JSON.parse(b).id));
    check('the download has one line per labelled record, typed as labels: reads them', JSON.stringify(order2(got)) === JSON.stringify(order2(want.join('\n'))), '\n' + got);
    check('… in the data set\'s order', JSON.stringify(got.split('\n').filter(Boolean)) === JSON.stringify(order2(want.join('\n'))));
    check('no script errors or console messages', problems.length === 0, problems.join('; '));
  } finally {
    await browser.close();
  }
}

if (mode === 'patch') patch(args[0], args[1], args[2]);
else if (mode === 'browse') {
  await browse(args[0], args[1], args[2], args[3], args[4] || '');
  process.exitCode = failed ? 1 : 0;
} else {
  console.error('usage: labelling_test.mjs browse REPORT DOWNLOAD_DIR CHROMIUM NPM_DIR [SCREENSHOT_DIR] | patch REPORT LABELS OUT NPM_DIR');
  process.exitCode = 2;
}
