// test-ext-tasks-client.mjs: terret-exec mcp on MCP 2026-07-28 with the
// Tasks extension, driven by the official @modelcontextprotocol/ext-tasks
// client (its V2 lane: rawDispatch and v2RequestFraming) over the
// official @modelcontextprotocol/client, as a real host drives it. Every
// Tasks message both ways is checked against the extension's 2026-07-28
// schemas, as the package publishes them. Prints TAP. The server is
// $TERRET_EXEC_CLI with the backend $TERRET_MCP_BACKEND (pty).
//
// SPDX-License-Identifier: LGPL-2.1-or-later

let Client, StdioClientTransport, createTaskSessionFromClient, v2;
try {
  ({ Client } = await import('@modelcontextprotocol/client'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/client/stdio'));
  ({ createTaskSessionFromClient } = await import('@modelcontextprotocol/ext-tasks/client'));
  v2 = await import('@modelcontextprotocol/ext-tasks/core/v2');
} catch (e) {
  console.log('1..0 # SKIP @modelcontextprotocol/client and ext-tasks are not installed in tests/mcp: ' +
              'run build-aux/install-deps --tests (' + e.message + ')');
  process.exit(0);
}
import assert from 'node:assert/strict';

const cli = process.env.TERRET_EXEC_CLI;
const backend = process.env.TERRET_MCP_BACKEND;

if (!cli || !backend) {
  console.log('1..0 # SKIP needs TERRET_EXEC_CLI and a backend that runs commands (TERRET_MCP_BACKEND)');
  process.exit(0);
}

const PROTOCOL = '2026-07-28';
const clientInfo = { name: 'terret-exec-tests', version: '1.0.0' };
const clientCapabilities = { elicitation: { form: {} } };

// The schema each Tasks message must match, by method: [request, result].
const schemas = {
  'tools/call': [null, (r) => (r.resultType === 'task' ? v2.CreateTaskResultV2Schema : v2.CallToolResultV2Schema).safeParse(r)],
  'tasks/get': [v2.GetTaskRequestV2Schema, (r) => v2.GetTaskResultV2Schema.safeParse(r)],
  'tasks/update': [v2.UpdateTaskRequestV2Schema, (r) => v2.UpdateTaskResultV2Schema.safeParse(r)],
  'tasks/cancel': [v2.CancelTaskRequestV2Schema, (r) => v2.CancelTaskResultV2Schema.safeParse(r)],
};

// The host's request coordinator: raw JSON-RPC on the client's own
// connection, with ids of its own, so Tasks shapes the SDK client does
// not decode (resultType "task") reach the ext-tasks session. Each
// message is checked against the extension's schema on the way.
function coordinator (transport, seen) {
  const pending = new Map();
  let next = 0;
  const inner = transport.onmessage;

  transport.onmessage = (message, extra) => {
    if (message.method === 'notifications/tasks') {
      const parsed = v2.TaskStatusNotificationV2Schema.safeParse(message);
      assert.ok(parsed.success, 'notifications/tasks: ' + JSON.stringify(message));
    }
    if (typeof message.id === 'string' && pending.has(message.id) && !('method' in message)) {
      const { method, resolve } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) {
        resolve({ kind: 'error', error: message.error });
        return;
      }
      const parsed = schemas[method]?.[1](message.result);
      if (parsed !== undefined && !parsed.success)
        throw new Error(`${method} result fails the 2026-07-28 Tasks schema: ${JSON.stringify(message.result)}: ` +
                        parsed.error.message);
      seen.push({ method, result: message.result });
      resolve({ kind: 'result', result: message.result });
      return;
    }
    inner?.(message, extra);
  };

  return async (request, options = {}) => {
    const id = `host-${++next}`;
    const message = { jsonrpc: '2.0', id, ...request };
    const requestSchema = schemas[request.method]?.[0];

    if (requestSchema) {
      const parsed = requestSchema.safeParse(message);
      assert.ok(parsed.success, `${request.method} request fails the Tasks schema: ${JSON.stringify(message)}`);
    }
    if (request.method === 'tools/call' || request.method.startsWith('tasks/'))
      assert.ok(v2.hasTaskClientCapabilityV2(request.params), 'the request declares the Tasks extension');
    return new Promise((resolve, reject) => {
      pending.set(id, { method: request.method, resolve, reject });
      options.signal?.addEventListener('abort', () => {
        pending.delete(id);
        transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
        reject(options.signal.reason);
      }, { once: true });
      transport.send(message).catch(reject);
    });
  };
}

async function connect (onInputRequest) {
  const transport = new StdioClientTransport({
    command: cli,
    args: ['mcp', '--backend', backend],
    env: { ...process.env },
    stderr: 'inherit',
  });
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: { pin: PROTOCOL } },
  });
  await client.connect(transport);
  const seen = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: 'terret-exec',
    rawDispatch: coordinator(transport, seen),
    v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo, clientCapabilities },
    ...(onInputRequest ? { onInputRequest } : {}),
  });
  return { client, session, seen };
}

async function disconnect ({ client, session }) {
  await session.close();
  await client.close();
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

const completed = async (execution) => {
  const { outcome } = await execution.settle();
  assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
  assert.equal(outcome.result.isError, false, JSON.stringify(outcome.result));
  return outcome.result;
};

test('server/discover: 2026-07-28 with the Tasks extension, no initialize', async () => {
  const c = await connect();
  try {
    assert.ok(v2.hasTaskServerCapabilityV2(c.client.getServerCapabilities()),
              JSON.stringify(c.client.getServerCapabilities()));
    const { tools } = await c.client.listTools();
    const bash = tools.find((t) => t.name === 'bash');
    assert.ok(bash);
    assert.equal(bash.execution, undefined, 'a 2026-07-28 Tool has no execution');
  } finally {
    await disconnect(c);
  }
});

test('a command runs as a task and completes with its output', async () => {
  const c = await connect();
  try {
    const execution = await c.session.callTool('bash', { command: 'echo one; sleep 0.3; echo two' });
    assert.equal(execution.kind, 'task', 'bash answers with a task');
    const result = await completed(execution);
    assert.equal(result.structuredContent.stdout, 'one\ntwo\n');
    assert.equal(result.structuredContent.status, 0);
    assert.ok(c.seen.some((m) => m.method === 'tasks/get' && m.result.status === 'completed'));
  } finally {
    await disconnect(c);
  }
});

test('a command handed back by return_after is polled on, and its output joined', async () => {
  const c = await connect();
  try {
    const execution = await c.session.callTool('bash', {
      command: 'echo a; sleep 1; echo b',
      return_after: 0.3,
    });
    const result = await completed(execution);
    assert.equal(result.structuredContent.stdout, 'a\nb\n');
    assert.ok(result.content[0].text.startsWith('a\nb\n'), result.content[0].text);
  } finally {
    await disconnect(c);
  }
});

test('tasks/cancel ends the task and its command', async () => {
  const c = await connect();
  try {
    const execution = await c.session.callTool('bash', { command: 'sleep 30; echo never' });
    await execution.cancel();
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'cancelled', JSON.stringify(outcome));
    assert.ok(c.seen.some((m) => m.method === 'tasks/cancel'));
    // The server serves on: another task completes.
    const next = await c.session.callTool('bash', { command: 'echo next', session: 'other' });
    assert.equal((await completed(next)).structuredContent.stdout, 'next\n');
  } finally {
    await disconnect(c);
  }
});

// Whether the server can tell that a command waits for input: a plain
// tools/call whose command prompts, handed back by return_after, says so
// (waiting_for_input true) or cannot know (null).
async function detectsInput () {
  const c = await connect();
  try {
    const result = await c.client.callTool({
      name: 'bash',
      arguments: { command: 'read -p "probe: " x', return_after: 1 },
    });
    return result.structuredContent.waiting_for_input === true;
  } finally {
    await disconnect(c);
  }
}

test('a prompt is input_required; the answer is typed and the task completes', async (tap) => {
  if (!(await detectsInput()))
    return tap.todo('the backend does not report a command waiting for input yet');
  const asked = [];
  const c = await connect(async (request) => {
    asked.push(request);
    assert.equal(request.kind, 'elicitation');
    assert.equal(request.params.mode, 'form');
    assert.match(request.params.message, /Name:/);
    return { action: 'accept', content: { input: 'world' } };
  });
  try {
    const execution = await c.session.callTool('bash', { command: 'read -p "Name: " n; echo "hello $n"' });
    const result = await completed(execution);
    assert.equal(asked.length, 1);
    assert.match(result.structuredContent.stdout, /hello world\n$/);
    assert.ok(c.seen.some((m) => m.method === 'tasks/get' && m.result.status === 'input_required'));
    assert.ok(c.seen.some((m) => m.method === 'tasks/update'));
  } finally {
    await disconnect(c);
  }
});

console.log(`1..${tests.length}`);
let failed = 0;
for (const [i, { name, fn }] of tests.entries()) {
  let todo = null;
  try {
    await fn({ todo: (why) => { todo = why; } });
    if (todo !== null)
      console.log(`not ok ${i + 1} - ${name} # TODO ${todo}`);
    else
      console.log(`ok ${i + 1} - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${i + 1} - ${name}`);
    for (const line of String(e.stack ?? e).split('\n'))
      console.log(`# ${line}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
