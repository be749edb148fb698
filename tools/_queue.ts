// One turn's calls through one scope apply in the order the model gave them. Agent runners run a
// turn's tool calls at once (the Anthropic SDK's tool runner, the AI SDK's generateText), so
// without this a memory_write and a memory_read of the same key in one turn race, and the read
// can miss the write the model planned before it. Each scope (or, for a run without one, each
// memoryTools or anthropicMemoryHandlers call) has one queue; a call starts when the one before
// it settled, whatever its outcome. Tools that are not memory tools are never queued.

import type { Tool } from "./tool.ts";

class Queue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(() => undefined, () => undefined);
    return result;
  }
}

const QUEUES = new WeakMap<object, Queue>();
const KEYS = new WeakMap<Tool, object>();

/** Runs `fn` after every call queued before it under `key` has settled. */
export function inOrder<T>(key: object, fn: () => Promise<T>): Promise<T> {
  let queue = QUEUES.get(key);
  if (queue === undefined) QUEUES.set(key, queue = new Queue());
  return queue.run(fn);
}

/** Marks `tool` as one whose calls queue under `key` (its run's scope, or its own run's token). */
export function setOrderKey(tool: Tool, key: object): void {
  KEYS.set(tool, key);
}

/** Runs one call of `tool`: queued behind the earlier calls of its scope when it has one. */
export function runOrdered<T>(tool: Tool, fn: () => Promise<T>): Promise<T> {
  const key = KEYS.get(tool);
  return key === undefined ? fn() : inOrder(key, fn);
}
