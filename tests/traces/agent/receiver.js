// A loopback OTLP/HTTP JSON receiver that writes what it receives as the OpenTelemetry Collector's file
// exporter does: one export request per line. POST /v1/traces -> <prefix>-traces.jsonl, /v1/logs -> <prefix>-logs.jsonl.
// Prints "listening on <port>" and runs until killed.
'use strict';
const http = require('http');
const fs = require('fs');
const prefix = process.argv[2];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const kind = req.url.startsWith('/v1/logs') ? 'logs' : req.url.startsWith('/v1/traces') ? 'traces' : '';
    try {
      if (!kind || req.method !== 'POST') throw new Error('not an OTLP path: ' + req.url);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));  // OTLP/HTTP JSON only
      fs.appendFileSync(`${prefix}-${kind}.jsonl`, JSON.stringify(body) + '\n');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    } catch (e) {
      res.writeHead(400);
      res.end(String(e));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
