// The CLI's commands, in the order `agentmem --help` lists them. Parsing, dispatch, suggestions
// and help all read this table: a new command is one entry here and its handler file (a `Command`
// from _spec.ts).

import { bucketInitCommand } from "./_bucket.ts";
import { checkCommand, exportCommand } from "./_check.ts";
import { deleteCommand, infoCommand, listCommand, readCommand, writeCommand } from "./_commands.ts";
import {
  historyCommand,
  logCommand,
  restoreCommand,
  revertCommand,
  showCommand,
} from "./_history.ts";
import { importCommand } from "./_import.ts";
import { serveCommand } from "./_serve.ts";
import { approveCommand, rejectCommand, reviewCommand, reviewShowCommand } from "./_review.ts";
import { purgeCommand, redactCommand } from "./_redact.ts";
import type { Command } from "./_spec.ts";

/** Every command. */
export const COMMANDS: readonly Command[] = [
  infoCommand,
  listCommand,
  readCommand,
  writeCommand,
  deleteCommand,
  checkCommand,
  exportCommand,
  importCommand,
  historyCommand,
  logCommand,
  showCommand,
  restoreCommand,
  revertCommand,
  // "review show" before "review": the parser takes the first entry a command line starts with.
  reviewShowCommand,
  reviewCommand,
  approveCommand,
  rejectCommand,
  redactCommand,
  purgeCommand,
  serveCommand,
  bucketInitCommand,
];
