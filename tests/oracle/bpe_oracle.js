// Reference GPT-2 BPE encodings from the npm package gpt-3-encoder (Encoder.js), for
// comparison by src/data/tokenizer_test.cc.
//
// Usage: node bpe_oracle.js [INPUT.json|-] [GPT3_ENCODER_DIR]
// INPUT.json holds a JSON array of strings (stdin when absent or "-"). Prints one JSON
// array with, for each string, the array of token ids Encoder.js gives it. The encoder
// directory defaults to $ZT_BPE_DIR, else third_party/npm/node_modules/gpt-3-encoder
// under the repository root (two levels above this script). Exits non-zero with a
// message on stderr when the package or the input cannot be read.
'use strict';
const fs = require('fs');
const path = require('path');

function fail(msg) {
  process.stderr.write('bpe_oracle.js: ' + msg + '\n');
  process.exit(2);
}

const inputArg = process.argv[2];
const encoderDir = process.argv[3] || process.env.ZT_BPE_DIR ||
  path.join(__dirname, '..', '..', 'third_party', 'npm', 'node_modules', 'gpt-3-encoder');
const encoderJs = path.join(encoderDir, 'Encoder.js');
if (!fs.existsSync(encoderJs)) fail('cannot find ' + encoderJs + ' (run setup.sh to install gpt-3-encoder)');

let text;
try {
  text = fs.readFileSync(inputArg && inputArg !== '-' ? inputArg : 0, 'utf-8');
} catch (e) {
  fail('cannot read input ' + (inputArg || 'stdin') + ': ' + e.message);
}
let samples;
try {
  samples = JSON.parse(text);
} catch (e) {
  fail('input is not JSON: ' + e.message);
}
if (!Array.isArray(samples) || !samples.every(s => typeof s === 'string')) {
  fail('input must be a JSON array of strings');
}

const { encode } = require(encoderJs);
const out = samples.map(s => {
  const ids = encode(s);
  if (ids.some(id => typeof id !== 'number')) fail('Encoder.js produced a non-numeric id for ' + JSON.stringify(s));
  return ids;
});
process.stdout.write(JSON.stringify(out) + '\n');
