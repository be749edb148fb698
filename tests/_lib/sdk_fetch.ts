// A scripted `fetch` for the Anthropic and OpenAI clients: each request gets the next scripted
// JSON reply, and every request is recorded, so an SDK's own loop runs with no network.

import Anthropic from "@anthropic-ai/sdk";

/** One request the scripted fetch saw. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly body: unknown;
}

/** A fetch that answers with `replies` in order and records what it was asked. */
export interface ScriptedFetch {
  readonly fetch: typeof fetch;
  readonly requests: SeenRequest[];
  /** How many scripted replies are left unused. */
  readonly left: () => number;
}

/**
 * Makes a scripted fetch. A reply is a JSON body, or a function of the request's body that
 * returns one (to answer with what the request carried). Past the script it fails the request.
 */
export function scriptedFetch(
  replies: readonly (unknown | ((body: unknown) => unknown))[],
): ScriptedFetch {
  const requests: SeenRequest[] = [];
  let next = 0;
  const fetchFn = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const text = await request.text();
    const body = text === "" ? undefined : JSON.parse(text);
    requests.push({ method: request.method, url: request.url, body });
    if (next >= replies.length) {
      return new Response(JSON.stringify({ error: { message: "no scripted reply left" } }), {
        status: 400,
        headers: { "content-type": "application/json" },
      });
    }
    const reply = replies[next++];
    const json = typeof reply === "function" ? reply(body) : reply;
    return new Response(JSON.stringify(json), {
      status: 200,
      headers: { "content-type": "application/json", "request-id": `req_${next}` },
    });
  };
  return { fetch: fetchFn as typeof fetch, requests, left: () => replies.length - next };
}

/** An Anthropic Messages API reply. */
export function anthropicMessage(
  content: unknown[],
  stopReason: "tool_use" | "end_turn" = "end_turn",
): unknown {
  return {
    id: `msg_${crypto.randomUUID().slice(0, 8)}`,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  };
}

/** An Anthropic `tool_use` content block. */
export function toolUse(id: string, name: string, input: unknown): unknown {
  return { type: "tool_use", id, name, input };
}

/** An OpenAI Responses API reply with `output` items. */
export function openaiResponse(output: unknown[]): unknown {
  return {
    id: `resp_${crypto.randomUUID().slice(0, 8)}`,
    object: "response",
    created_at: 0,
    status: "completed",
    model: "gpt-5",
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    temperature: 1,
    top_p: 1,
  };
}

/** A `tool_result` block as the Anthropic tool runner sends it back. */
export interface ToolResultBlock {
  type: string;
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** The `tool_result` blocks the Anthropic tool runner sent in request `i`. */
export function toolResults(script: ScriptedFetch, i: number): ToolResultBlock[] {
  const body = script.requests[i]!.body as { messages: { role: string; content: unknown }[] };
  return body.messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as ToolResultBlock[]).filter((b) => b.type === "tool_result")
      : []
  );
}

/**
 * Runs the Anthropic SDK's own tool runner over `script` with `tools` (runnable tools, or
 * anything the runner takes) until the scripted model stops, and returns the `tool_result`
 * blocks it sent back after the first reply.
 */
export async function toolRunnerTurn(
  script: ScriptedFetch,
  tools: readonly unknown[],
): Promise<ToolResultBlock[]> {
  await new Anthropic({ apiKey: "k", fetch: script.fetch, maxRetries: 0 }).beta.messages
    .toolRunner({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      messages: [{ role: "user", content: "remember this" }],
      tools: tools as never,
    });
  return toolResults(script, 1);
}
