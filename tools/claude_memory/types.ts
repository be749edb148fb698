/**
 * The commands of Claude's memory tool (`memory_20250818`) and the handlers that answer them:
 * structural copies of the Anthropic SDK's types, so this library never imports the SDK.
 *
 * @module
 */

import type { AnthropicToolRunContext } from "../anthropic.ts";

/** `view`: a file with line numbers, or the directory's memories. */
export interface MemoryViewCommand {
  /** Always `"view"`. */
  readonly command: "view";
  /** `/memories` or `/memories/<key>`. */
  readonly path: string;
  /** `[first, last]` lines of a file (1-based, `-1` for the end); of the directory, entries. */
  readonly view_range?: readonly number[] | undefined;
}

/** `create`: a new file with the given text. */
export interface MemoryCreateCommand {
  /** Always `"create"`. */
  readonly command: "create";
  /** `/memories/<key>`. */
  readonly path: string;
  /** The file's text. */
  readonly file_text: string;
}

/** `str_replace`: replace text that occurs exactly once in a file. */
export interface MemoryStrReplaceCommand {
  /** Always `"str_replace"`. */
  readonly command: "str_replace";
  /** `/memories/<key>`. */
  readonly path: string;
  /** The text to replace; it must occur exactly once in the file, and may span lines. */
  readonly old_str: string;
  /** The text to put in its place; omitted (or `null`), `old_str` is deleted. */
  readonly new_str?: string | null | undefined;
}

/** `insert`: insert a line into a file. */
export interface MemoryInsertCommand {
  /** Always `"insert"`. */
  readonly command: "insert";
  /** `/memories/<key>`. */
  readonly path: string;
  /** The line after which to insert (0 for the top). */
  readonly insert_line: number;
  /** The text to insert; one trailing newline is dropped. */
  readonly insert_text: string;
}

/** `delete`: delete a file. */
export interface MemoryDeleteCommand {
  /** Always `"delete"`. */
  readonly command: "delete";
  /** `/memories/<key>`. */
  readonly path: string;
}

/** `rename`: give a file another name. */
export interface MemoryRenameCommand {
  /** Always `"rename"`. */
  readonly command: "rename";
  /** The file's path. */
  readonly old_path: string;
  /** Its new path, which must not exist yet. */
  readonly new_path: string;
}

/**
 * Handlers for each command of Claude's memory tool: a structural copy of the SDK's
 * `MemoryToolHandlers`, so this library never imports the SDK. Each resolves to the text the
 * model sees, and rejects with an `Error` whose message the SDK sends back with `is_error: true`.
 *
 * Each also takes the tool runner's context, optionally: its `tool_use` id becomes the `callId`
 * every write records, and its signal aborts the command. The SDK's `betaMemoryTool` passes none;
 * a runnable tool of your own whose `run(input, context)` calls `handlers[input.command](input,
 * context)` passes it on.
 */
export interface AnthropicMemoryHandlers {
  /** Shows a file with line numbers, or the memories in `/memories`. */
  view(command: MemoryViewCommand, context?: AnthropicToolRunContext): Promise<string>;
  /** Creates a file; fails when it exists. */
  create(command: MemoryCreateCommand, context?: AnthropicToolRunContext): Promise<string>;
  /** Replaces text occurring exactly once in a file. */
  str_replace(command: MemoryStrReplaceCommand, context?: AnthropicToolRunContext): Promise<string>;
  /** Inserts a line into a file. */
  insert(command: MemoryInsertCommand, context?: AnthropicToolRunContext): Promise<string>;
  /** Deletes a file. */
  delete(command: MemoryDeleteCommand, context?: AnthropicToolRunContext): Promise<string>;
  /** Renames a file; fails when the new name exists. */
  rename(command: MemoryRenameCommand, context?: AnthropicToolRunContext): Promise<string>;
}
