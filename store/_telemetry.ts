// OpenTelemetry spans for store calls. `@opentelemetry/api` is a no-op until the host installs
// an SDK, so an uninstrumented host pays a few function calls.

import { type Attributes, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { MemoryError } from "./errors.ts";

/** The instrumentation scope name on every span this library makes. */
export const TRACER_NAME = "@agentmem/memory";

/**
 * Runs `fn` inside an active span named `name`, recording the outcome: `memory.outcome` is `ok`
 * or the error's code (`error` for an error that is not a `MemoryError`).
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(
    name,
    { kind: SpanKind.INTERNAL, attributes },
    async (span) => {
      try {
        const result = await fn(span);
        span.setAttribute("memory.outcome", "ok");
        return result;
      } catch (e) {
        const code = e instanceof MemoryError ? e.code : "error";
        span.setAttribute("memory.outcome", code);
        span.setAttribute("error.type", code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: code });
        throw e;
      } finally {
        span.end();
      }
    },
  );
}
