// Spans from store calls, tool calls and the system note, through the real OpenTelemetry SDK with
// an async-hooks context manager, so parent/child nesting is what a host would see.

import assert from "node:assert/strict";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { memorySystemNote, memoryTools, openFileStore, openStore, type Tool } from "../../mod.ts";
import { FakeStore, outage } from "../_lib/fake_store.ts";
import { inTempDir } from "../_lib/temp_dir.ts";

const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(contextManager);
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
);

function byName(tools: Tool[]): Record<string, Tool> {
  return Object.fromEntries(tools.map((t) => [t.name, t]));
}

function spans(): ReadableSpan[] {
  const out = exporter.getFinishedSpans();
  exporter.reset();
  return out;
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

function attrs(span: ReadableSpan): Record<string, unknown> {
  return { ...span.attributes };
}

const opts = { sanitizeOps: false, sanitizeResources: false };

// A test of telemetry in a fresh temp directory.
function otelTest(name: string, fn: (dir: string) => Promise<void>): void {
  Deno.test({ name, ...opts, fn: () => inTempDir("agentmem-otel-", fn) });
}

otelTest("a tool call makes a span, with the store calls it makes nested under it", async (dir) => {
  const t = byName(memoryTools(await openFileStore({ dir })));
  spans();
  await t.memory_write!.run(
    { key: "k", description: "d", content: "c" },
    { toolCallId: "toolu_1" },
  );
  const [create, tool] = spans();
  assert.equal(tool!.name, "execute_tool memory_write");
  assert.deepEqual(attrs(tool!), {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "memory_write",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.call.id": "toolu_1",
    "memory.backend": "file",
    "memory.operation": "memory_write",
    "memory.key": "k",
    "memory.outcome": "ok",
  });
  assert.equal(create!.name, "memory.create");
  assert.deepEqual(attrs(create!), {
    "memory.backend": "file",
    "memory.operation": "create",
    "memory.key": "k",
    "memory.outcome": "ok",
  });
  assert.equal(parentOf(create!), tool!.spanContext().spanId);
  assert.equal(create!.spanContext().traceId, tool!.spanContext().traceId);
  assert.equal(tool!.instrumentationScope.name, "@agentmem/memory");
});

otelTest(
  "a refused write records the error code on the tool span and on the store spans",
  async (dir) => {
    const t = byName(memoryTools(await openFileStore({ dir })));
    await t.memory_write!.run({ key: "k", description: "d", content: "c" });
    spans();
    const r = await t.memory_write!.run({ key: "k", description: "d", content: "c" });
    assert.equal(r.isError, true);
    const all = spans();
    assert.deepEqual(all.map((s) => s.name), [
      "memory.create",
      "memory.read",
      "execute_tool memory_write",
    ]);
    const [create, read, tool] = all as [ReadableSpan, ReadableSpan, ReadableSpan];
    assert.equal(create.attributes["memory.outcome"], "exists");
    assert.equal(create.status.code, 2);
    assert.equal(read.attributes["memory.outcome"], "ok");
    assert.equal(tool.attributes["memory.outcome"], "exists");
    assert.equal(tool.attributes["error.type"], "exists");
    assert.equal(tool.status.code, 2);
    for (const child of [create, read]) {
      assert.equal(parentOf(child), tool.spanContext().spanId);
    }
  },
);

Deno.test({
  name: "tool spans carry the outcome of every kind of call",
  ...opts,
  fn: async () => {
    const store = new FakeStore();
    const t = byName(memoryTools(store));
    spans();
    await t.memory_read!.run("{not json");
    await t.memory_read!.run({ key: 42 });
    await t.memory_read!.run({ key: "a/b" });
    await t.memory_read!.run({ key: "missing" });
    await t.memory_list!.run({});
    await t.memory_write!.run({ key: "k", description: "d", content: "c", overwrite: true });
    store.failWith = outage();
    await t.memory_delete!.run({ key: "k" });
    store.failWith = undefined;
    // A store that breaks its contract by throwing a raw error, synchronously.
    const broken = new FakeStore();
    broken.read = () => {
      throw new Error("sync");
    };
    assert.equal((await byName(memoryTools(broken)).memory_read!.run({ key: "k" })).isError, true);
    // An entry whose fields throw when looked at: the handler fails, the model sees an internal
    // error, and the span says "error".
    const hostile = new FakeStore();
    hostile.read = () =>
      Promise.resolve({
        get description(): string {
          throw new Error("getter");
        },
        content: "",
      });
    const internal = await byName(memoryTools(hostile)).memory_read!.run({ key: "k" });
    assert.match(internal.content, /internal error/);
    const tools = spans().filter((s) => s.name.startsWith("execute_tool "));
    assert.deepEqual(
      tools.map((s) => [s.attributes["gen_ai.tool.name"], s.attributes["memory.outcome"]]),
      [
        ["memory_read", "invalid_arguments"],
        ["memory_read", "invalid_arguments"],
        ["memory_read", "invalid_key"],
        ["memory_read", "not_found"],
        ["memory_list", "ok"],
        ["memory_write", "stale"],
        ["memory_delete", "unavailable"],
        ["memory_read", "error"],
        ["memory_read", "error"],
      ],
    );
    for (const s of tools) assert.equal(s.attributes["memory.backend"], "fake");

    // An illegal key never lands on a span.
    assert.equal(tools[2]!.attributes["memory.key"], undefined);
  },
});

Deno.test({
  name: "a store that is not built by the library still makes store spans under the tool span",
  ...opts,
  fn: async () => {
    const fake = new FakeStore();
    const store = await openStore({}, { store: fake });
    assert.equal(store, fake);
    const t = byName(memoryTools(store));
    spans();
    await t.memory_read!.run({ key: "nope" });
    const [read, tool] = spans();
    assert.equal(read!.name, "memory.read");
    assert.equal(read!.attributes["memory.backend"], "fake");
    assert.equal(read!.attributes["memory.outcome"], "not_found");
    assert.equal(parentOf(read!), tool!.spanContext().spanId);
  },
});

Deno.test({
  name: "tool spans nest under the host's own span",
  ...opts,
  fn: async () => {
    const t = byName(memoryTools(new FakeStore()));
    spans();
    const tracer = trace.getTracer("host");
    await tracer.startActiveSpan("agent.turn", async (turn) => {
      await t.memory_list!.run({});
      turn.end();
    });
    const [list, tool, turn] = spans();
    assert.equal(turn!.name, "agent.turn");
    assert.equal(parentOf(tool!), turn!.spanContext().spanId);
    assert.equal(parentOf(list!), tool!.spanContext().spanId);
  },
});

Deno.test({
  name: "memorySystemNote() makes a span with the index size, and records a failed listing",
  ...opts,
  fn: async () => {
    const store = new FakeStore();
    for (let i = 0; i < 5; i++) store.seed(`k${i}`, "d", "c");
    spans();
    await memorySystemNote(store);
    const [list, note] = spans();
    assert.equal(note!.name, "memory.system_note");
    assert.deepEqual(attrs(note!), {
      "memory.backend": "fake",
      "memory.operation": "system_note",
      "memory.index.entries": 5,
      "memory.index.shown": 5,
      "memory.pinned": 0,
      "memory.outcome": "ok",
    });
    assert.equal(parentOf(list!), note!.spanContext().spanId);
    store.failWith = outage();
    await memorySystemNote(store);
    const [failed, degraded] = spans();
    assert.equal(failed!.attributes["memory.outcome"], "unavailable");
    assert.equal(degraded!.attributes["memory.outcome"], "unavailable");
  },
});

otelTest("with history, memory_read and the note each make one store call", async (dir) => {
  // One read (one list) carries the entry and the version it shows: a second call, made apart,
  // could mark a memory with the version of a write that came after the one it shows.
  const store = await openFileStore({ dir });
  await store.create("k", "d", "c");
  const t = byName(memoryTools(store));
  spans();
  await t.memory_read!.run({ key: "k" });
  assert.deepEqual(spans().map((s) => s.name), ["memory.read", "execute_tool memory_read"]);
  await memorySystemNote(store);
  assert.deepEqual(spans().map((s) => s.name), ["memory.list", "memory.system_note"]);
});
