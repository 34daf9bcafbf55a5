// test-sdk-client.mjs: terret-exec mcp driven by the official MCP
// TypeScript SDK client over StdioClientTransport, as a real host drives
// it. Prints TAP. The server is $TERRET_EXEC_CLI with the backend
// $TERRET_MCP_BACKEND (pty); the module path comes from the environment.
//
// SPDX-License-Identifier: LGPL-2.1-or-later

// Imported at run time, so a tree configured before the SDK was
// installed still runs the test once it is, and says so when it is not.
let Client, StdioClientTransport, CallToolResultSchema;
try {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ CallToolResultSchema } = await import('@modelcontextprotocol/sdk/types.js'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
} catch (e) {
  console.log('1..0 # SKIP the MCP TypeScript SDK is not installed in tests/mcp: ' +
              'run build-aux/install-deps --tests');
  process.exit(0);
}
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cli = process.env.TERRET_EXEC_CLI;
const backend = process.env.TERRET_MCP_BACKEND;

if (!cli || !backend) {
  console.log('1..0 # SKIP needs TERRET_EXEC_CLI and a backend that runs commands (TERRET_MCP_BACKEND)');
  process.exit(0);
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

async function connect () {
  const transport = new StdioClientTransport({
    command: cli,
    args: ['mcp', '--backend', backend],
    env: { ...process.env },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'terret-exec-tests', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const structured = (result) => {
  assert.equal(result.isError, false, JSON.stringify(result));
  return result.structuredContent;
};

const bash = async (client, args, options) =>
  client.callTool({ name: 'bash', arguments: args }, undefined, options);

// Waits for @pid to be gone. The count only keeps a process left behind
// from hanging the suite; reaching it fails.
async function waitGone (pid) {
  for (let i = 0; i < 1200; i++) {
    try {
      process.kill(pid, 0);
    } catch (e) {
      if (e.code === 'ESRCH') return;
      throw e;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`process ${pid} is still running`);
}

test('initialize and tools/list', async (client) => {
  const version = client.getServerVersion();
  assert.equal(version.name, 'terret-exec');
  assert.ok(client.getServerCapabilities().tools);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes('bash'), names.join());
  const tool = tools.find((t) => t.name === 'bash');
  assert.deepEqual(tool.inputSchema.required, ['command']);
  assert.ok(tool.outputSchema.properties.cwd);
  for (const name of ['bash_input', 'bash_interrupt', 'bash_poll', 'bash_close'])
    assert.ok(names.includes(name), `${name} on ${backend}`);
});

test('cd then pwd in one session', async (client) => {
  await bash(client, { command: 'cd /tmp' });
  const out = structured(await bash(client, { command: 'pwd' }));
  assert.equal(out.stdout, '/tmp\n');
  assert.equal(out.status, 0);
  assert.equal(out.cwd, '/tmp');
});

test('two sessions are isolated', async (client) => {
  await bash(client, { session: 'a', command: 'cd /tmp; X=from-a' });
  await bash(client, { session: 'b', command: 'cd /; X=from-b' });
  const [a, b] = await Promise.all([
    bash(client, { session: 'a', command: 'echo "$PWD $X"' }),
    bash(client, { session: 'b', command: 'echo "$PWD $X"' }),
  ]);
  assert.equal(structured(a).stdout, '/tmp from-a\n');
  assert.equal(structured(b).stdout, '/ from-b\n');
});

test('a timeout stops the command', async (client) => {
  const result = await bash(client, { session: 't', command: 'sleep 30', timeout: 0.5 });
  const out = structured(result);
  assert.equal(out.timed_out, true);
  assert.equal(out.status, null);
  assert.equal(out.running, false);
  assert.match(result.content[0].text, /timed out/);
});

test('an AbortSignal cancels the run', async (client) => {
  const controller = new AbortController();
  let pid = null;
  let started;
  const seen = new Promise((resolve) => { started = resolve; });
  const call = bash(client, { session: 'c', command: "sh -c 'echo started $$; exec sleep 30'" }, {
    signal: controller.signal,
    onprogress: (progress) => {
      const m = /started (\d+)/.exec(progress.message ?? '');
      if (m && pid === null) {
        pid = Number(m[1]);
        started();
      }
    },
  });
  await seen;
  controller.abort('test');
  await assert.rejects(call);
  await waitGone(pid);
  // The session is free again.
  const out = structured(await bash(client, { session: 'c', command: 'echo again' }));
  assert.equal(out.stdout, 'again\n');
});

test('a detached command is polled to its end', async (client) => {
  const first = structured(await bash(client, {
    session: 'd', command: 'read x; echo "got:$x"', timeout: 0.2, on_timeout: 'detach',
  }));
  assert.equal(first.running, true);
  assert.equal(first.status, null);
  let text = first.stdout;

  const input = await client.callTool({ name: 'bash_input', arguments: { session: 'd', data: 'hi\n' } });
  assert.equal(input.isError, false);

  for (let i = 0; ; i++) {
    assert.ok(i < 100, 'the command never ended');
    const out = structured(await client.callTool({ name: 'bash_poll', arguments: { session: 'd', wait: 10 } }));
    text += out.stdout;
    if (!out.running) {
      assert.equal(out.status, 0);
      break;
    }
  }
  assert.equal(text, 'got:hi\n');
});

// Reads the stream of a task-augmented call to its end, in the
// background: the task's creation resolves @created.
function taskStream (client, args) {
  let created;
  const task = new Promise((resolve) => { created = resolve; });
  const messages = (async () => {
    const seen = [];
    for await (const message of client.experimental.tasks.callToolStream({ name: 'bash', arguments: args })) {
      seen.push(message);
      if (message.type === 'taskCreated')
        created(message.task);
    }
    return seen;
  })();
  return { task, messages };
}

async function waitFor (predicate, what) {
  for (let i = 0; i < 1200; i++) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}

test('bash is offered as a task (2025-11-25)', async (client) => {
  assert.ok(client.getServerCapabilities().tasks.requests.tools.call);
  assert.ok(client.getServerCapabilities().tasks.cancel);
  assert.ok(client.getServerCapabilities().tasks.list);
  const { tools } = await client.listTools();
  assert.equal(tools.find((t) => t.name === 'bash').execution.taskSupport, 'optional');
  assert.equal(tools.find((t) => t.name === 'bash_poll').execution, undefined);
});

test('a task outlives three other calls', async (client) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'terret-task-'));
  const go = path.join(dir, 'go');
  const { task, messages } = taskStream(client, {
    session: 'task-long',
    command: `while [ ! -e '${go}' ]; do sleep 0.05; done; echo finished`,
  });
  const { taskId } = await task;

  // Three calls come and go while the task works.
  for (const n of [1, 2, 3]) {
    const out = structured(await bash(client, { session: `task-other-${n}`, command: `echo call ${n}` }));
    assert.equal(out.stdout, `call ${n}\n`);
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'working');
  }
  const listed = await client.experimental.tasks.listTasks();
  assert.ok(listed.tasks.some((t) => t.taskId === taskId && t.status === 'working'),
            JSON.stringify(listed));

  fs.writeFileSync(go, '');
  const seen = await messages;
  const result = seen.find((m) => m.type === 'result');
  assert.ok(result, JSON.stringify(seen));
  assert.equal(result.result.structuredContent.stdout, 'finished\n');
  assert.equal(result.result.structuredContent.status, 0);
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'completed');
  // tasks/result again: the same result, tied to its task.
  const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  assert.equal(again.structuredContent.stdout, 'finished\n');
  assert.equal(again._meta['io.modelcontextprotocol/related-task'].taskId, taskId);
  fs.rmSync(dir, { recursive: true });
});

test('a task cancelled mid-run ends its whole tree', async (client) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'terret-task-'));
  const pids = path.join(dir, 'pids');
  const { task, messages } = taskStream(client, {
    session: 'task-cancel',
    command: `sleep 1000 & echo $! >> '${pids}'; sh -c 'echo $$ >> "${pids}"; exec sleep 1000'`,
  });
  const { taskId } = await task;
  await waitFor(() => fs.existsSync(pids) && fs.readFileSync(pids, 'utf8').split('\n').length > 2,
                'the command wrote its pids');
  const tree = fs.readFileSync(pids, 'utf8').trim().split('\n').map(Number);
  assert.equal(tree.length, 2);
  for (const pid of tree)
    process.kill(pid, 0);

  const cancelled = await client.experimental.tasks.cancelTask(taskId);
  assert.equal(cancelled.status, 'cancelled');
  for (const pid of tree)
    await waitGone(pid);
  const seen = await messages;
  assert.ok(seen.some((m) => m.type === 'error' && /cancelled/.test(m.error.message)), JSON.stringify(seen));
  assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'cancelled');
  await assert.rejects(client.experimental.tasks.cancelTask(taskId), /terminal status 'cancelled'/);

  // The session is free again.
  const out = structured(await bash(client, { session: 'task-cancel', command: 'echo again' }));
  assert.equal(out.stdout, 'again\n');
  fs.rmSync(dir, { recursive: true });
});

// A host's loop: start a dev server, get control back after 2 s, list it,
// read the middle of its log, stop it.
test('a dev server: return after 2 s, list it, read its log, stop it', async (client) => {
  const first = structured(await bash(client, {
    session: 'dev',
    command: "sh -c 'echo \"listening pid $$\"; i=0; while :; do i=$((i+1)); echo \"GET /page/$i 200\"; " +
             "[ $i = 3000 ] && echo \"Error: database connection refused\"; " +
             "[ $i -ge 6000 ] && sleep 0.2; done'",
    timeout: 2,
    on_timeout: 'detach',
  }));
  assert.equal(first.running, true);
  assert.ok(first.full_output, 'mcp keeps the full output by default');
  const pid = Number(/listening pid (\d+)/.exec(first.stdout)[1]);

  // Listed: a host that lost the session's name finds it here.
  const listed = await client.callTool({ name: 'bash_list', arguments: {} });
  assert.equal(listed.isError, false);
  const entry = listed.structuredContent.sessions.find((s) => s.session === 'dev');
  assert.ok(entry, 'the dev session is listed');
  assert.equal(entry.state, 'detached');
  assert.match(entry.command, /listening pid/);

  // The log's middle, by pattern, then the lines around the match.
  let match;
  await waitFor(async () => {
    const read = await client.callTool({ name: 'bash_output', arguments: { session: 'dev', pattern: '^Error:' } });
    match = read.structuredContent.matches[0];
    return match !== undefined;
  }, 'the error line reached the log');
  assert.equal(match.text, 'Error: database connection refused');
  assert.equal(match.line, 3002);
  const around = await client.callTool({ name: 'bash_output', arguments: { session: 'dev', line: 3001, lines: 3 } });
  assert.equal(around.structuredContent.data,
               'GET /page/3000 200\nError: database connection refused\nGET /page/3001 200\n');

  // Stop it.
  const stop = await client.callTool({ name: 'bash_interrupt', arguments: { session: 'dev' } });
  assert.equal(stop.isError, false);
  for (let i = 0; ; i++) {
    assert.ok(i < 100, 'the server never stopped');
    const out = structured(await client.callTool({ name: 'bash_poll', arguments: { session: 'dev', wait: 10 } }));
    if (!out.running) break;
  }
  await waitGone(pid);
});

test('closing a session never opened is a tool error', async (client) => {
  const result = await client.callTool({ name: 'bash_close', arguments: { session: 'nope' } });
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /nope/);
});

let failed = 0;
const client = await connect();
console.log(`1..${tests.length}`);
for (const [i, { name, fn }] of tests.entries()) {
  try {
    await fn(client);
    console.log(`ok ${i + 1} - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${i + 1} - ${name}`);
    for (const line of String(e?.stack ?? e).split('\n'))
      console.log(`# ${line}`);
  }
}
await client.close();
process.exit(failed > 0 ? 1 : 0);
