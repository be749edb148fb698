// The CLI's help text and version.

import meta from "../deno.json" with { type: "json" };

/** The package version, from deno.json. */
export const VERSION: string = meta.version;

/** The `--help` text. */
export const USAGE: string = `agentmem ${VERSION}: the operator CLI for agentmem memory stores

Usage: agentmem <command> [arguments] [options]

Commands:
  info                 the backend, its location and (jetstream) the key prefix in use
  list                 every readable key and its description
  read <key>           a memory's description and body (--raw: the body alone, byte for byte)
  write <key>          create a memory (--overwrite replaces one); the body comes from
                       --content, --file, or standard input (UTF-8; invalid UTF-8 is refused)
  delete <key>         delete a memory
  check                every entry in the keyspace, including those list hides (damaged
                       header or body, illegal names, stray values); exit 1 if any is damaged
  export               a versioned dump on stdout (one JSON object a line: a header, one
                       {"key","description","content"} per memory, a trailer with the count);
                       every readable entry is written, each unreadable one is named on stderr,
                       and the exit status is 1 if any was left out
  import [file]        load a dump (a file, or standard input). The whole input is checked
                       first (JSON, UTF-8, keys, limits, duplicate keys, capacity) and nothing
                       is written if any record is bad. A key that already holds different
                       content is skipped and named (exit 1), or replaced with --overwrite;
                       --dry-run says what would happen and writes nothing
  history <key>        every kept version of a memory, newest first: revision, time, what the
                       write did, and who made it (run, actor, the path it came by, the model's
                       tool call id, whether the run was tainted)
  log                  versions across keys, oldest first; narrow with --key, --run, --actor,
                       --since, --until (ISO 8601), --tainted, --limit
  show <key> <rev>     what one version held (--raw: the body alone)
  restore <key> <rev>  write what that version held as the newest version (a deleted key comes
                       back); refused as stale if the memory changed meanwhile
  revert --run <id>    put every key that run wrote back to what it held before the run's first
                       write (--dry-run first: says what would change); a key someone else
                       wrote since is left alone and named as a conflict (exit 1)
  serve                the operator console: a local web page over the store (memories, their
                       timelines and diffs, the audit log, runs and their reverts, the check).
                       Prints one line, the URL with a random access token; serves until
                       SIGINT or SIGTERM. Read-only unless --write
  bucket init          create a jetstream KV bucket that the backend accepts, with what history
                       needs (its stream keeps every version until it is moved to the history
                       stream KVH_<bucket>); an existing bucket gets what it lacks of that, and
                       keeps every memory

Choosing the store (the file backend in ./.agentmem unless told otherwise):
  --dir <path>         file backend: the memory directory. Only write and import create it;
                       the other commands need it to exist
  --servers <urls>     jetstream backend: NATS server URLs, comma-separated; user:password@
                       in a URL logs in with them (never printed)
  --bucket <name>      jetstream backend: the KV bucket (default "agentmem")
  --prefix <prefix>    jetstream backend: the key prefix. The library's default prefix is the
                       run's identity, so an agent with identity "agent-7" keeps key "user.name"
                       at bucket key "agent-7.user.name". The CLI has no identity: its default
                       is "" (the whole bucket, where that memory shows as
                       "agent-7.user.name"); pass --prefix agent-7 to see it as the agent does
  --creds <file>       jetstream backend: a NATS credentials file
  --config <file>      a JSON object {"backend", "options", "readOnly"}, as openStore takes
                       (--servers and --creds still choose the NATS connection)

Command options:
  --description <text>  write: the one-line description (required)
  --content <text>      write: the body
  --file <path>         write: read the body from this file
  --overwrite           write, import: replace existing memories
  --dry-run             import, revert, bucket init: say what would happen, change nothing
  --key <key>           log: only this key's versions
  --run <id>            log: only this run's writes; revert: the run to undo
  --actor <id>          log: only writes for this actor
  --since <time>        log: versions at or after this time (ISO 8601, e.g. 2026-12-01T08:00Z)
  --until <time>        log: versions before this time
  --tainted             log: only writes from runs that read untrusted input
  --limit <n>           log: at most this many versions
  --port <n>            serve: the TCP port (default 0: a free one)
  --host <address>      serve: the address to bind (default 127.0.0.1; any other warns)
  --write               serve: allow restore, revert, approve and reject (each confirmed)
  --raw                 read, show: print the body alone, byte for byte (for piping)
  --replicas <n>        bucket init: replicas, 1 to 5 (default 1; 3 on a cluster)
  --storage <kind>      bucket init: file (default) or memory (lost when the server restarts)
  --max-value-size <n>  bucket init: bytes (default and minimum: the largest entry plus the
                        headers of a write)

Other options:
  --read-only          never create or write anything (a missing directory is an error)
  --json               machine-readable output (errors as JSON on stderr)
  --version            the version
  -h, --help           this help

Environment (jetstream): NATS_USER and NATS_PASSWORD, or NATS_TOKEN, log in when neither
--creds nor a URL's user:password@ is given. Credentials are never printed.

Human output shows control characters, bidirectional controls and invisible format characters
in stored text as \\uXXXX escapes; --json and --raw give the exact text.

Exit status: 0 on success, 1 when the operation failed or found a problem, 2 on a usage error.`;
