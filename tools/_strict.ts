// A tool's input schema rewritten to meet OpenAI's strict-mode rules: every object lists all its
// properties as required and sets `additionalProperties: false`, and a property that was
// optional takes `null` instead (the memory tools read a `null` optional field as omitted).
// Length limits, which strict mode does not take, are left out; the tool still enforces them.

import type { JsonSchemaObject } from "./tool.ts";
import { isPlainObject } from "./_args.ts";

const UNSUPPORTED = ["minLength", "maxLength"];

/** The strict-mode form of `schema`, as a fresh copy. */
export function strictSchema(schema: JsonSchemaObject): JsonSchemaObject {
  return strictNode(schema) as JsonSchemaObject;
}

function strictNode(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictNode);
  if (!isPlainObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (UNSUPPORTED.includes(k)) continue;
    out[k] = k === "properties" && isPlainObject(v)
      ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, strictNode(s)]))
      : k === "enum" || k === "const" || k === "default" || k === "examples"
      ? v
      : strictNode(v);
  }
  if (out.type === "object" || isPlainObject(out.properties)) {
    const properties = isPlainObject(out.properties) ? out.properties : {};
    const required = Array.isArray(node.required) ? node.required : [];
    for (const [name, schema] of Object.entries(properties)) {
      if (!required.includes(name)) properties[name] = nullable(schema);
    }
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

function nullable(schema: unknown): unknown {
  if (!isPlainObject(schema)) return schema;
  const { type } = schema;
  if (typeof type === "string") {
    if (type === "null") return schema;
    const out: Record<string, unknown> = { ...schema, type: [type, "null"] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) {
      out.enum = [...schema.enum, null];
    }
    return out;
  }
  if (Array.isArray(type) && schema.anyOf === undefined) {
    return type.includes("null") ? schema : { ...schema, type: [...type, "null"] };
  }
  return { anyOf: [schema, { type: "null" }] };
}
