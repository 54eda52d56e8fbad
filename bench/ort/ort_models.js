#!/usr/bin/env node
// The ONNX Runtime side of `npu-bench models`: the anchor. It loads the models
// torch_models.py exported, with the CPU execution provider, intra-op threads =
// the server's, graph optimisations on (ORT's defaults otherwise), and times
// one inference on request, so the C++ bench alternates it with the server's
// Run and torch's pass (same machine, same load, same moment).
//
// usage: node ort_models.js DIR THREADS MODEL...
//
// Reads DIR/MODEL.onnx and DIR/MODEL.input.npy (input "input", float32) and
// prints "ready". Each line "time MODEL" runs one inference and prints its
// seconds; "check MODEL" prints max |ort - torch| / max |torch| against
// DIR/MODEL.ref.npy; "quit" (or end of input) ends it. An error goes to stderr
// and ends the process, so the bench reads an empty line and says so.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const ort = require('onnxruntime-node');

// A little-endian float32 .npy file (what numpy.save writes): {shape, data}.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  if (!/'descr':\s*'<f4'/.test(header)) throw new Error(`${file}: float32 expected, header ${header.trim()}`);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order is not read`);
  const dims = header.match(/'shape':\s*\(([^)]*)\)/);
  if (!dims) throw new Error(`${file}: no shape in header ${header.trim()}`);
  const shape = dims[1].split(',').map((d) => d.trim()).filter((d) => d.length > 0).map(Number);
  const offset = start + headerLen;
  const count = shape.reduce((a, b) => a * b, 1);
  // Copied out: the file's bytes need not be 4-byte aligned for a Float32Array view.
  const data = new Float32Array(count);
  for (let i = 0; i < count; ++i) data[i] = buf.readFloatLE(offset + 4 * i);
  return { shape, data };
}

function maxRelativeError(got, want) {
  let err = 0;
  let scale = 0;
  for (let i = 0; i < want.length; ++i) {
    err = Math.max(err, Math.abs(got[i] - want[i]));
    scale = Math.max(scale, Math.abs(want[i]));
  }
  return scale > 0 ? err / scale : err;
}

async function main() {
  const [dir, threadsArg, ...names] = process.argv.slice(2);
  const threads = Number(threadsArg);
  if (!dir || !(threads >= 1) || names.length === 0) {
    throw new Error('usage: node ort_models.js DIR THREADS MODEL...');
  }
  const models = new Map();
  for (const name of names) {
    const session = await ort.InferenceSession.create(path.join(dir, `${name}.onnx`), {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    });
    const x = readNpy(path.join(dir, `${name}.input.npy`));
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
    models.set(name, { session, feeds });
  }
  console.log('ready');
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) {
    const [command, name] = line.trim().split(/\s+/);
    if (!command || command === 'quit') break;
    const model = models.get(name);
    if (!model) throw new Error(`unknown model "${name}"`);
    if (command === 'time') {
      const t0 = process.hrtime.bigint();
      await model.session.run(model.feeds);
      console.log((Number(process.hrtime.bigint() - t0) / 1e9).toFixed(9));
    } else if (command === 'check') {
      const out = await model.session.run(model.feeds);
      const ref = readNpy(path.join(dir, `${name}.ref.npy`));
      console.log(maxRelativeError(out[model.session.outputNames[0]].data, ref.data).toExponential(3));
    } else {
      throw new Error(`unknown command "${command}" (time, check, quit)`);
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`ort_models.js: ${e.message}`);
    process.exit(1);
  },
);
