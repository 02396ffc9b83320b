// A small assistant instrumented the way teams do it: the real `openai` client, instrumented by one of
//   genai          @opentelemetry/instrumentation-openai (GenAI conventions; message content as log events)
//   openinference  @arizeai/openinference-instrumentation-openai
//   openllmetry    @traceloop/instrumentation-openai
// calling the loopback LLM test server, with a retriever span and a tool call made by the agent itself (their
// attributes written in the same convention), exported over OTLP/HTTP JSON to tests/traces/agent/receiver.js.
// Two sessions of two turns each. Usage: node agent.js <convention> <llm base url> <otlp base url>
'use strict';
const [convention, llmUrl, otlpUrl] = process.argv.slice(2);
const api = require('@opentelemetry/api');
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const logsApi = require('@opentelemetry/api-logs');
const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');

const resource = resourceFromAttributes({ 'service.name': 'eg-test-agent', 'deployment.environment': 'test' });
// Small batches: a trace's spans arrive over several export requests, children before their root.
const provider = new NodeTracerProvider({
  resource,
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${otlpUrl}/v1/traces` }), { maxExportBatchSize: 3, scheduledDelayMillis: 50 })],
});
provider.register();
const loggerProvider = new LoggerProvider({
  resource,
  processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${otlpUrl}/v1/logs` }), maxExportBatchSize: 4, scheduledDelayMillis: 50 })],
});
logsApi.logs.setGlobalLoggerProvider(loggerProvider);

let instrumentation;
if (convention === 'genai') {
  const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
  instrumentation = new OpenAIInstrumentation({ captureMessageContent: true });
} else if (convention === 'openinference') {
  const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
  instrumentation = new OpenAIInstrumentation();
} else if (convention === 'openllmetry') {
  const { OpenAIInstrumentation } = require('@traceloop/instrumentation-openai');
  instrumentation = new OpenAIInstrumentation({ traceContent: true, enrichTokens: false });
} else {
  throw new Error('unknown convention ' + convention);
}
registerInstrumentations({ instrumentations: [instrumentation], tracerProvider: provider, loggerProvider });
const OpenAI = require('openai');  // after the instrumentation, so that its require hook patches the module

const tracer = api.trace.getTracer('eg-test-agent', '1.0.0');
const client = new OpenAI({ apiKey: 'test-key', baseURL: llmUrl, maxRetries: 0 });

const KB = [
  { id: 'kb-ship', text: 'Orders ship within 2 working days; express orders ship the same day.' },
  { id: 'kb-return', text: 'Returns are free within 30 days of delivery; refunds take 5 days.' },
  { id: 'kb-track', text: 'An order status can be looked up with its order id, e.g. A17.' },
];
const TOOLS = [{
  type: 'function',
  function: {
    name: 'get_order_status',
    description: "Looks up an order's status",
    parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  },
}];
const SYSTEM = 'You are the support assistant of a web shop. Answer from the documents given; cite their ids.';

function setAttrs(span, attrs) { for (const [k, v] of Object.entries(attrs)) span.setAttribute(k, v); }

function retrieve(query) {
  return tracer.startActiveSpan('retrieve documents', (span) => {
    const words = new Set(query.toLowerCase().match(/[a-z0-9]+/g));
    const docs = KB.map((d) => ({ ...d, score: d.text.toLowerCase().match(/[a-z0-9]+/g).filter((w) => words.has(w)).length / 10 }))
      .sort((a, b) => b.score - a.score).slice(0, 2);
    if (convention === 'genai') {
      setAttrs(span, { 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': 'shop-kb', 'gen_ai.retrieval.query.text': query,
        'gen_ai.retrieval.documents': JSON.stringify(docs.map((d) => ({ id: d.id, content: d.text, score: d.score }))) });
    } else if (convention === 'openinference') {
      setAttrs(span, { 'openinference.span.kind': 'RETRIEVER', 'input.value': query });
      docs.forEach((d, i) => setAttrs(span, { [`retrieval.documents.${i}.document.id`]: d.id,
        [`retrieval.documents.${i}.document.content`]: d.text, [`retrieval.documents.${i}.document.score`]: d.score }));
    } else {
      setAttrs(span, { 'traceloop.span.kind': 'task', 'traceloop.entity.name': 'retrieve',
        'traceloop.entity.input': JSON.stringify({ args: [query], kwargs: {} }),
        'traceloop.entity.output': JSON.stringify(docs.map((d) => ({ id: d.id, content: d.text, score: d.score }))) });
    }
    span.end();
    return docs;
  });
}

function getOrderStatus(callId, args) {
  return tracer.startActiveSpan('execute_tool get_order_status', (span) => {
    const result = JSON.stringify({ order_id: args.order_id, status: args.order_id === 'A17' ? 'shipped' : 'processing' });
    const argText = JSON.stringify(args);
    if (convention === 'genai') {
      setAttrs(span, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_order_status', 'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': callId, 'gen_ai.tool.call.arguments': argText, 'gen_ai.tool.call.result': result });
    } else if (convention === 'openinference') {
      setAttrs(span, { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_order_status', 'tool.description': "Looks up an order's status",
        'tool_call.id': callId, 'input.value': argText, 'input.mime_type': 'application/json', 'output.value': result });
    } else {
      setAttrs(span, { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'get_order_status',
        'traceloop.entity.input': JSON.stringify({ args: [], kwargs: args }), 'traceloop.entity.output': result });
    }
    span.end();
    return result;
  });
}

const SESSION_KEY = { genai: 'gen_ai.conversation.id', openinference: 'session.id', openllmetry: 'traceloop.association.properties.session_id' };

async function turn(session, n, question, orderId, history) {
  return tracer.startActiveSpan('agent turn', async (root) => {
    setAttrs(root, { [SESSION_KEY[convention]]: session });
    if (convention === 'openinference') root.setAttribute('openinference.span.kind', 'AGENT');
    if (convention === 'genai') { root.setAttribute('gen_ai.operation.name', 'invoke_agent'); root.setAttribute('gen_ai.agent.name', 'shop-support'); }
    if (convention === 'openllmetry') { root.setAttribute('traceloop.span.kind', 'agent'); root.setAttribute('traceloop.entity.name', 'shop-support'); }
    const docs = retrieve(question);
    const callId = `call_${session}_${n}`;
    const args = { order_id: orderId };
    const result = getOrderStatus(callId, args);
    const messages = [
      { role: 'system', content: SYSTEM + '\n' + docs.map((d) => `[${d.id}] ${d.text}`).join('\n') },
      ...history,
      { role: 'user', content: question },
      { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'get_order_status', arguments: JSON.stringify(args) } }] },
      { role: 'tool', tool_call_id: callId, content: result },
    ];
    const completion = await client.chat.completions.create({ model: 'test-model', messages, tools: TOOLS, temperature: 0 });
    const answer = completion.choices[0].message.content;
    history.push({ role: 'user', content: question }, { role: 'assistant', content: answer });
    root.end();
    return answer;
  });
}

async function main() {
  const sessions = [
    ['s-anna', [['Where is my order A17?', 'A17'], ['Can I still return it within 30 days?', 'A17']]],
    ['s-ben', [['When does order B22 ship?', 'B22'], ['Is express shipping faster?', 'B22']]],
  ];
  for (const [session, turns] of sessions) {
    const history = [];
    for (let i = 0; i < turns.length; ++i) await turn(session, i + 1, turns[i][0], turns[i][1], history);
  }
  await provider.forceFlush();
  await loggerProvider.forceFlush();
  await provider.shutdown();
  await loggerProvider.shutdown();
}
main().catch((e) => { console.error(e); process.exit(1); });
