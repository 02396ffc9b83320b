// Reference token counts: one count per line of a JSONL file of strings, with the real encoding
// (js-tiktoken). Usage: node reference.js cl100k_base|o200k_base < texts.jsonl
const {Tiktoken} = require('js-tiktoken/lite');
const name = process.argv[2] || 'cl100k_base';
const ranks = require(`js-tiktoken/ranks/${name}`);
const enc = new Tiktoken(ranks.default || ranks);
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter((l) => l.length);
process.stdout.write(lines.map((l) => String(enc.encode(JSON.parse(l)).length)).join('\n') + '\n');
