// OpenTelemetry spans for store calls, tool calls and the system note. `@opentelemetry/api` is a
// no-op until the host installs an SDK, so an uninstrumented host pays a few function calls.

import {
  type Attributes,
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { MemoryError } from "./errors.ts";

/** The instrumentation scope name on every span this library makes. */
export const TRACER_NAME = "@agentmem/memory";

/** The `memory.outcome` of a call that succeeded. */
export const OUTCOME_OK = "ok";

/**
 * Runs `fn` inside an active span named `name`, recording the outcome on `memory.outcome`: `ok`,
 * or the error's code (`error` for an error that is not a `MemoryError`). A call that resolves can
 * still report a failure through `outcomeOf` (a tool call resolves with an error result rather
 * than rejecting); any outcome other than `ok` marks the span as an error.
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  outcomeOf?: (result: T) => string,
): Promise<T> {
  // With no SDK installed every span is a no-op; skip making one and its context, which would
  // cost more than a file read's own bookkeeping.
  const provider = trace.getTracerProvider();
  if (provider instanceof ProxyTracerProvider && !provider.getDelegateTracer(TRACER_NAME)) {
    return fn(NO_SPAN);
  }
  return trace.getTracer(TRACER_NAME).startActiveSpan(
    name,
    { kind: SpanKind.INTERNAL, attributes },
    async (span) => {
      try {
        const result = await fn(span);
        setOutcome(span, outcomeOf === undefined ? OUTCOME_OK : outcomeOf(result));
        return result;
      } catch (e) {
        setOutcome(span, e instanceof MemoryError ? e.code : "error");
        throw e;
      } finally {
        span.end();
      }
    },
  );
}

const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

function setOutcome(span: Span, outcome: string): void {
  span.setAttribute("memory.outcome", outcome);
  if (outcome === OUTCOME_OK) return;
  span.setAttribute("error.type", outcome);
  span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
}
