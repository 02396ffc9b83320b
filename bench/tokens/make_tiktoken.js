// Writes an encoding's .tiktoken file (one "<base64 token bytes> <rank>" per line, the format OpenAI publishes)
// from the ranks that the js-tiktoken npm package carries, for machines that cannot fetch
// https://openaipublic.blob.core.windows.net/encodings/<name>.tiktoken. See docs/cost.md.
//   npm install js-tiktoken && node make_tiktoken.js cl100k_base out/cl100k_base.tiktoken
const fs = require('fs');
const [name, out] = process.argv.slice(2);
if (!name || !out) { console.error('usage: node make_tiktoken.js cl100k_base|o200k_base OUT.tiktoken'); process.exit(2); }
const mod = require(`js-tiktoken/ranks/${name}`);
const ranks = (mod.default || mod).bpe_ranks;
const lines = [];
for (const line of ranks.split('\n')) {
  const parts = line.split(' ');
  if (parts.length < 2) continue;
  let rank = Number(parts[1]);
  for (const tok of parts.slice(2)) if (tok) lines.push(`${tok} ${rank++}`);
}
fs.writeFileSync(out, lines.join('\n') + '\n');
console.error(`${out}: ${lines.length} ranks`);
