// The floors: the fastest way to do each job on Deno without the library, so a target says how
// far the library is from what the runtime allows (not from a copy of the library's own calls).
//
// - read: `Deno.readFileSync`, decode, split the header from the body.
// - list: one `readDirSync` pass, then one small read (the first KiB) per entry, decode, find the
//   description line. No bodies.
// - durable create: `lstat` (an existing key costs no write), temp file, write, fsync, `link`
//   (exclusive), unlink the temp, then one directory fsync shared by every create in flight
//   (group commit: a write is acknowledged only after a directory fsync that started after its
//   link). One file fsync per create plus one directory fsync per batch; with one create in
//   flight, two fsyncs per create.
// - durable update: the same with `rename` in place of `link`.

const DECODER = new TextDecoder();
const HEAD_BYTES = 1024;

/** Reads one entry file whole and splits header from body; returns the body's length. */
export function rawRead(path: string): number {
  const text = DECODER.decode(Deno.readFileSync(path));
  const end = text.indexOf("\n---\n", 4);
  if (end < 0) throw new Error("No header");
  return text.length - end - 5;
}

/** One directory pass plus the first KiB of each `.md` entry: every key and description. */
export function rawList(dir: string): { key: string; description: string }[] {
  const out: { key: string; description: string }[] = [];
  const buf = new Uint8Array(HEAD_BYTES);
  for (const e of Deno.readDirSync(dir)) {
    if (!e.isFile || !e.name.endsWith(".md") || e.name.startsWith(".")) continue;
    const file = Deno.openSync(`${dir}/${e.name}`);
    let n: number;
    try {
      n = file.readSync(buf) ?? 0;
    } finally {
      file.close();
    }
    const head = DECODER.decode(buf.subarray(0, n));
    const at = head.indexOf("description: ");
    const eol = head.indexOf("\n", at);
    out.push({ key: e.name.slice(0, -3), description: head.slice(at + 13, eol) });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Shares one directory fsync between every write that is waiting for one. */
export class DirSync {
  readonly #dir: string;
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  /** Directory fsyncs made so far. */
  count = 0;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Resolves after a directory fsync that started after this call. */
  sync(): Promise<void> {
    if (this.#running === undefined) {
      this.#running = this.#once().finally(() => (this.#running = undefined));
      return this.#running;
    }
    this.#queued ??= this.#running.then(() => {
      this.#queued = undefined;
      return this.sync();
    });
    return this.#queued;
  }

  async #once(): Promise<void> {
    this.count++;
    const handle = Deno.openSync(this.#dir, { read: true });
    try {
      await handle.sync();
    } finally {
      handle.close();
    }
  }
}

async function stage(dir: string, key: string, bytes: Uint8Array): Promise<string> {
  const temp = `${dir}/.${key}.${crypto.randomUUID()}.tmp`;
  const file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
  try {
    for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
    await file.syncData();
  } finally {
    file.close();
  }
  return temp;
}

/** Durable exclusive create; `false` when the key exists. */
export async function rawCreate(
  dir: string,
  sync: DirSync,
  key: string,
  bytes: Uint8Array,
): Promise<boolean> {
  const path = `${dir}/${key}.md`;
  // Look before staging: a key that exists costs one lstat, not a durable write. `link` stays
  // the arbiter when two creates race past the look.
  try {
    Deno.lstatSync(path);
    return false;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const temp = await stage(dir, key, bytes);
  try {
    Deno.linkSync(temp, path);
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return false;
    throw e;
  } finally {
    Deno.removeSync(temp);
  }
  await sync.sync();
  return true;
}

/** Durable replace. */
export async function rawUpdate(
  dir: string,
  sync: DirSync,
  key: string,
  bytes: Uint8Array,
): Promise<void> {
  const temp = await stage(dir, key, bytes);
  Deno.renameSync(temp, `${dir}/${key}.md`);
  await sync.sync();
}

/** Runs `fn` over `items` with at most `width` calls in flight; resolves to the elapsed ms. */
export async function inFlight<T>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return performance.now() - t0;
}
