#!/usr/bin/python3
# powercut: a FUSE file system that, on a simulated power cut, loses everything no sync covered.
# A test tool of agentmem (tests/powercut/README.md). Run it with Debian's /usr/bin/python3, which
# has python3-pyfuse3; it needs root and /dev/fuse.
#
# The model. Processes see the current state, held in this daemon's memory. What survives a cut is
# the durable state, held in the backing directory (meta.json, its journal and data/), which only
# syncs change:
# - fsync or fdatasync of a file (the two are the same here) makes its data, size and attributes,
#   as they are at that moment, durable.
# - fsync of a directory makes its entries, as they are at that moment, durable: names created,
#   linked, renamed into it, unlinked or renamed out of it, subdirectories made or removed. An
#   entry naming a file whose data no sync covered survives as an empty file, a new directory as
#   an empty one, a symlink with its target. So a new file's data is reachable after a cut only if
#   both its data and its name were synced.
# - A rename between two directories is two changes, each covered by its own directory's fsync;
#   a directory keeps one durable parent (its new parent's fsync moves it).
# - Nothing else reaches the durable state: no writeback, no journal commit of other changes.
# A cut drops the current state (the daemon exits at once, answering no pending request), loads
# the durable state, deletes what no durable name reaches, and mounts again, so every descriptor
# open before the cut fails (ENOTCONN), as after a reboot. Reordering: none beyond dropping
# everything uncovered, unless the cut gives keep=P: then each file whose data, and each directory
# whose entries, no sync covered keeps its current state whole with probability P (independently,
# from the cut's seed), as if the kernel had written it back just before the power went. Writes to
# one file, and changes to one directory, are never split. flock and fcntl locks are the kernel's
# local emulation (this daemon implements neither); they die with the mount.
#
#   pcfs.py serve BACKING MOUNTPOINT CONTROL_SOCKET   the supervisor: mounts, then serves control
#   pcfs.py mount BACKING MOUNTPOINT                  one mount (the supervisor's child)
#
# Control: one line per connection to CONTROL_SOCKET, one JSON line back: `cut [keep=P] [seed=N]`,
# `remount` (everything synced first: a clean reboot), `stats`, `stop` (sync, unmount, exit).

import ctypes
import errno
import json
import os
import random
import select
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

ROOT = 1
ANSWER_S = 30  # how long the supervisor waits for the daemon to answer a command


def now():
    return time.time_ns()


class Node:
    __slots__ = ("ino", "mode", "uid", "gid", "rdev", "atime", "mtime", "ctime", "data", "target",
                 "entries", "nlink", "lookups", "opens", "dirty")

    def __init__(self, ino, mode, uid=0, gid=0):
        t = now()
        self.ino, self.mode, self.uid, self.gid, self.rdev = ino, mode, uid, gid, 0
        self.atime = self.mtime = self.ctime = t
        self.data = bytearray() if stat.S_ISREG(mode) else None
        self.entries = {} if stat.S_ISDIR(mode) else None
        self.target = b""
        self.nlink = 0  # names in the current state (directories: 1 while linked)
        self.lookups = 0  # the kernel's references
        self.opens = 0
        self.dirty = True  # differs from the durable state (data and attributes, or entries)

    def is_dir(self):
        return self.entries is not None


class Durable:
    """The durable state in the backing directory: a snapshot (meta.json) and a journal of the
    records each sync changed, one JSON line a sync, so that a sync costs what it changes. A line
    is committed once whole; each mount replays the journal into a new snapshot and starts a new
    journal (the snapshot names its journal, so a replay never runs twice)."""

    def __init__(self, backing):
        self.backing = backing
        self.datadir = os.path.join(backing, "data")
        os.makedirs(self.datadir, exist_ok=True)
        path = os.path.join(backing, "meta.json")
        self.changed = set()
        if os.path.exists(path):
            with open(path) as f:
                meta = json.load(f)
            self.next, self.gen, self.log = meta["next"], meta["gen"], meta["journal"]
            self.inodes = {int(k): v for k, v in meta["inodes"].items()}
            self.replay()
        else:
            t = now()
            self.next, self.gen, self.log = ROOT + 1, 0, 0
            self.inodes = {ROOT: {"mode": stat.S_IFDIR | 0o755, "uid": 0, "gid": 0, "rdev": 0,
                                  "atime": t, "mtime": t, "ctime": t, "entries": {}}}
        self.collect()
        self.snapshot()

    def journal(self, n):
        return os.path.join(self.backing, f"journal.{n}")

    def replay(self):
        try:
            with open(self.journal(self.log), "rb") as f:
                lines = f.read().split(b"\n")
        except FileNotFoundError:
            return
        for line in lines[:-1]:  # the part after the last newline was never committed
            entry = json.loads(line)
            self.next, self.gen = entry["next"], entry["gen"]
            self.inodes.update({int(k): v for k, v in entry["set"].items()})

    def snapshot(self):
        old = self.log
        self.log += 1
        tmp = os.path.join(self.backing, "meta.json.tmp")
        with open(tmp, "w") as f:
            json.dump({"next": self.next, "gen": self.gen, "journal": self.log,
                       "inodes": self.inodes}, f)
        os.replace(tmp, os.path.join(self.backing, "meta.json"))
        for n in (old, self.log):
            if os.path.exists(self.journal(n)):
                os.unlink(self.journal(n))
        self.fd = os.open(self.journal(self.log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def collect(self):
        # What no durable name reaches is gone after the cut (fsck's orphan clean-up).
        seen, todo = {ROOT}, [ROOT]
        while todo:
            rec = self.inodes[todo.pop()]
            for name, ino in list(rec.get("entries", {}).items()):
                child = self.inodes.get(ino)
                if child is None or ("entries" in child and ino in seen):
                    del rec["entries"][name]  # never: a dangling name or a second parent
                    continue
                if ino not in seen:
                    seen.add(ino)
                    todo.append(ino)
        self.inodes = {i: r for i, r in self.inodes.items() if i in seen}
        keep = {r["data"] for r in self.inodes.values() if r.get("data")}
        for name in os.listdir(self.datadir):
            if name not in keep:
                os.unlink(os.path.join(self.datadir, name))

    def save(self, drop=()):
        line = json.dumps({"next": self.next, "gen": self.gen,
                           "set": {i: self.inodes[i] for i in self.changed}}) + "\n"
        self.changed.clear()
        data = line.encode()
        while data:  # the commit point: the line's last byte
            data = data[os.write(self.fd, data):]
        for name in drop:
            try:
                os.unlink(os.path.join(self.datadir, name))
            except FileNotFoundError:
                pass

    def read(self, rec):
        if not rec.get("data"):
            return bytearray(rec.get("size", 0))
        with open(os.path.join(self.datadir, rec["data"]), "rb") as f:
            data = bytearray(f.read())
        return data + bytearray(rec["size"] - len(data))

    def write_data(self, node):
        self.gen += 1
        name = f"{node.ino}.{self.gen}"
        with open(os.path.join(self.datadir, name), "wb") as f:
            f.write(node.data)
        return name


def attrs(node):
    return {"mode": node.mode, "uid": node.uid, "gid": node.gid, "rdev": node.rdev,
            "atime": node.atime, "mtime": node.mtime, "ctime": node.ctime}


class State:
    """The current state, and the syncs that make parts of it durable."""

    def __init__(self, backing):
        self.d = Durable(backing)
        self.nodes = {}
        self.stats = {"syncs": 0, "dirsyncs": 0, "writes": 0, "bytes": 0, "ops": 0}
        for ino, rec in self.d.inodes.items():
            n = Node(ino, rec["mode"], rec["uid"], rec["gid"])
            n.rdev, n.atime, n.mtime, n.ctime = rec["rdev"], rec["atime"], rec["mtime"], rec["ctime"]
            if n.data is not None:
                n.data = self.d.read(rec)
            if "entries" in rec:
                n.entries = {os.fsencode(k): v for k, v in rec["entries"].items()}
            n.target = os.fsencode(rec.get("target", ""))
            n.dirty = False
            self.nodes[ino] = n
        self.nodes[ROOT].nlink = 1
        for n in list(self.nodes.values()):
            for ino in (n.entries or {}).values():
                self.nodes[ino].nlink += 1

    def new(self, mode, ctx):
        ino = self.d.next
        self.d.next += 1
        n = Node(ino, mode, ctx.uid, ctx.gid)
        self.nodes[ino] = n
        return n

    def maybe_free(self, n):
        if n.nlink == 0 and n.lookups == 0 and n.opens == 0 and n.ino != ROOT:
            self.nodes.pop(n.ino, None)

    def sync_file(self, n, save=True):
        rec = self.d.inodes.get(n.ino, {})
        old = rec.get("data")
        new = {**attrs(n)}
        if n.data is not None:
            new["size"] = len(n.data)
            new["data"] = self.d.write_data(n) if n.data else None
        if stat.S_ISLNK(n.mode):
            new["target"] = os.fsdecode(n.target)
        self.d.inodes[n.ino] = new
        self.d.changed.add(n.ino)
        n.dirty = False
        self.stats["syncs"] += 1
        if save:
            self.d.save([old] if old else [])

    def sync_dir(self, n, save=True):
        rec = self.d.inodes.setdefault(n.ino, attrs(n))
        rec.update(attrs(n))
        self.d.changed.add(n.ino)
        old = rec.get("entries", {})
        rec["entries"] = {os.fsdecode(k): v for k, v in n.entries.items()}
        moved = {v for v in rec["entries"].values() if v not in old.values()}
        for ino in moved:
            child = self.nodes.get(ino)
            if ino not in self.d.inodes:  # a new name for a node no sync has covered yet
                new = attrs(child)
                if child.data is not None:
                    new.update(size=0, data=None)
                if child.is_dir():
                    new["entries"] = {}
                if stat.S_ISLNK(child.mode):
                    new["target"] = os.fsdecode(child.target)
                self.d.inodes[ino] = new
                self.d.changed.add(ino)
            elif "entries" in self.d.inodes[ino]:  # a directory moved here leaves its old parent
                for other, orec in self.d.inodes.items():
                    if other != n.ino and ino in orec.get("entries", {}).values():
                        orec["entries"] = {k: v for k, v in orec["entries"].items() if v != ino}
                        self.d.changed.add(other)
        n.dirty = False
        self.stats["dirsyncs"] += 1
        if save:
            self.d.save()

    def cut(self, keep, seed):
        """What the cut keeps of the unsynced state (keep=0: nothing), saved before the exit."""
        rng = random.Random(seed)
        dirty = sorted((n for n in self.nodes.values() if n.dirty), key=lambda n: n.ino)
        kept = [n for n in dirty if keep > 0 and rng.random() < keep]
        rng.shuffle(kept)
        for n in kept:
            (self.sync_dir if n.is_dir() else self.sync_file)(n, save=False)
        self.d.save()
        files = sum(1 for n in dirty if not n.is_dir())
        kfiles = sum(1 for n in kept if not n.is_dir())
        return {"dropped_files": files - kfiles, "dropped_dirs": len(dirty) - files - len(kept) + kfiles,
                "kept_files": kfiles, "kept_dirs": len(kept) - kfiles}


def run_mount(backing, mountpoint):
    import pyfuse3
    import trio
    from pyfuse3 import FUSEError

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with it
    # A standby: the supervisor starts the next mount's process before it is needed, so a cut
    # does not wait for these imports. It mounts when told to, after the last one has gone.
    while os.read(0, 1) not in (b"\n", b""):
        pass
    st = State(backing)
    TIMEOUT = 5.0

    def err(code):
        return FUSEError(code)

    def entry(n):
        a = pyfuse3.EntryAttributes()
        a.st_ino, a.generation = n.ino, 0
        a.entry_timeout = a.attr_timeout = TIMEOUT
        a.st_mode, a.st_uid, a.st_gid, a.st_rdev = n.mode, n.uid, n.gid, n.rdev
        if n.is_dir():
            a.st_nlink = 0 if n.nlink == 0 else 2 + sum(
                1 for i in n.entries.values() if st.nodes[i].is_dir())
        else:
            a.st_nlink = n.nlink
        a.st_size = len(n.data) if n.data is not None else len(n.target) if n.target else 0
        a.st_blksize, a.st_blocks = 4096, (a.st_size + 511) // 512
        a.st_atime_ns, a.st_mtime_ns, a.st_ctime_ns = n.atime, n.mtime, n.ctime
        return a

    def node(ino):
        n = st.nodes.get(ino)
        if n is None:
            raise err(errno.ESTALE)
        return n

    def parent(ino):
        n = node(ino)
        if not n.is_dir():
            raise err(errno.ENOTDIR)
        return n

    def child(p, name):
        ino = p.entries.get(name)
        if ino is None:
            raise err(errno.ENOENT)
        return st.nodes[ino]

    def touch(*ns):
        t = now()
        for n in ns:
            n.mtime = n.ctime = t
            n.dirty = True

    def add(p, name, n):
        if name in p.entries:
            raise err(errno.EEXIST)
        if len(name) > 255:
            raise err(errno.ENAMETOOLONG)
        p.entries[name] = n.ino
        n.nlink += 1
        n.lookups += 1
        touch(p)
        return entry(n)

    def drop(p, name):
        n = st.nodes[p.entries.pop(name)]
        n.nlink -= 1
        n.ctime = now()
        touch(p)
        st.maybe_free(n)

    handles = {}
    counter = [0]

    def handle(value):
        counter[0] += 1
        handles[counter[0]] = value
        return counter[0]

    class Ops(pyfuse3.Operations):
        supports_dot_lookup = False

        async def lookup(self, parent_inode, name, ctx):
            st.stats["ops"] += 1
            n = child(parent(parent_inode), name)
            n.lookups += 1
            return entry(n)

        async def forget(self, inode_list):
            for ino, count in inode_list:
                n = st.nodes.get(ino)
                if n is not None:
                    n.lookups = max(0, n.lookups - count)
                    st.maybe_free(n)

        async def getattr(self, inode, ctx):
            return entry(node(inode))

        async def setattr(self, inode, attr, fields, fh, ctx):
            st.stats["ops"] += 1
            n = node(inode)
            if fields.update_size:
                if n.data is None:
                    raise err(errno.EISDIR if n.is_dir() else errno.EINVAL)
                size = attr.st_size
                if size < len(n.data):
                    del n.data[size:]
                else:
                    n.data.extend(bytes(size - len(n.data)))
                n.mtime = now()
            if fields.update_mode:
                n.mode = stat.S_IFMT(n.mode) | stat.S_IMODE(attr.st_mode)
            if fields.update_uid:
                n.uid = attr.st_uid
            if fields.update_gid:
                n.gid = attr.st_gid
            if fields.update_atime:
                n.atime = attr.st_atime_ns
            if fields.update_mtime:
                n.mtime = attr.st_mtime_ns
            n.ctime = now()
            n.dirty = True
            return entry(n)

        async def readlink(self, inode, ctx):
            n = node(inode)
            if not stat.S_ISLNK(n.mode):
                raise err(errno.EINVAL)
            return n.target

        async def opendir(self, inode, ctx):
            return handle((parent(inode), []))

        async def readdir(self, fh, start_id, token):
            n, snapshot = handles[fh]
            if start_id == 0:
                snapshot[:] = sorted(n.entries.items())
            for i in range(start_id, len(snapshot)):
                name, ino = snapshot[i]
                c = st.nodes.get(ino)
                if c is None:
                    continue
                if not pyfuse3.readdir_reply(token, name, entry(c), i + 1):
                    break
                c.lookups += 1

        async def releasedir(self, fh):
            handles.pop(fh, None)

        async def fsyncdir(self, fh, datasync):
            st.sync_dir(handles[fh][0])

        async def mkdir(self, parent_inode, name, mode, ctx):
            st.stats["ops"] += 1
            p = parent(parent_inode)
            if name in p.entries:
                raise err(errno.EEXIST)
            return add(p, name, st.new(stat.S_IFDIR | stat.S_IMODE(mode), ctx))

        async def mknod(self, parent_inode, name, mode, rdev, ctx):
            p = parent(parent_inode)
            if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)):
                raise err(errno.EPERM)
            if name in p.entries:
                raise err(errno.EEXIST)
            n = st.new(mode, ctx)
            n.rdev = rdev
            return add(p, name, n)

        async def symlink(self, parent_inode, name, target, ctx):
            st.stats["ops"] += 1
            p = parent(parent_inode)
            if name in p.entries:
                raise err(errno.EEXIST)
            n = st.new(stat.S_IFLNK | 0o777, ctx)
            n.target = target
            return add(p, name, n)

        async def link(self, inode, new_parent_inode, new_name, ctx):
            st.stats["ops"] += 1
            n, p = node(inode), parent(new_parent_inode)
            if n.is_dir():
                raise err(errno.EPERM)
            a = add(p, new_name, n)
            n.ctime = now()
            return a

        async def unlink(self, parent_inode, name, ctx):
            st.stats["ops"] += 1
            p = parent(parent_inode)
            if child(p, name).is_dir():
                raise err(errno.EISDIR)
            drop(p, name)

        async def rmdir(self, parent_inode, name, ctx):
            st.stats["ops"] += 1
            p = parent(parent_inode)
            c = child(p, name)
            if not c.is_dir():
                raise err(errno.ENOTDIR)
            if c.entries:
                raise err(errno.ENOTEMPTY)
            drop(p, name)

        async def rename(self, old_parent, old_name, new_parent, new_name, flags, ctx):
            st.stats["ops"] += 1
            op, np = parent(old_parent), parent(new_parent)
            src = child(op, old_name)
            dst_ino = np.entries.get(new_name)
            if flags & pyfuse3.RENAME_EXCHANGE:
                if dst_ino is None:
                    raise err(errno.ENOENT)
                op.entries[old_name], np.entries[new_name] = dst_ino, src.ino
                touch(op, np)
                return
            if dst_ino is not None:
                if flags & pyfuse3.RENAME_NOREPLACE:
                    raise err(errno.EEXIST)
                if dst_ino == src.ino:
                    return  # two names of one file: POSIX says do nothing
                dst = st.nodes[dst_ino]
                if src.is_dir() != dst.is_dir():
                    raise err(errno.ENOTDIR if src.is_dir() else errno.EISDIR)
                if dst.is_dir() and dst.entries:
                    raise err(errno.ENOTEMPTY)
                drop(np, new_name)
            del op.entries[old_name]
            np.entries[new_name] = src.ino
            src.ctime = now()
            touch(op, np)

        async def open(self, inode, flags, ctx):
            st.stats["ops"] += 1
            n = node(inode)
            if n.data is None:
                raise err(errno.EISDIR if n.is_dir() else errno.EINVAL)
            n.opens += 1
            return pyfuse3.FileInfo(fh=handle(n))

        async def create(self, parent_inode, name, mode, flags, ctx):
            st.stats["ops"] += 1
            p = parent(parent_inode)
            if name in p.entries:
                raise err(errno.EEXIST)
            n = st.new(stat.S_IFREG | stat.S_IMODE(mode), ctx)
            a = add(p, name, n)
            n.opens += 1
            return pyfuse3.FileInfo(fh=handle(n)), a

        async def read(self, fh, off, size):
            return bytes(handles[fh].data[off:off + size])

        async def write(self, fh, off, buf):
            n = handles[fh]
            if off > len(n.data):
                n.data.extend(bytes(off - len(n.data)))
            n.data[off:off + len(buf)] = buf
            touch(n)
            st.stats["writes"] += 1
            st.stats["bytes"] += len(buf)
            return len(buf)

        async def flush(self, fh):
            pass

        async def release(self, fh):
            n = handles.pop(fh)
            n.opens -= 1
            st.maybe_free(n)

        async def fsync(self, fh, datasync):
            st.sync_file(handles[fh])

        async def statfs(self, ctx):
            s = os.statvfs(backing)
            r = pyfuse3.StatvfsData()
            r.f_bsize, r.f_frsize, r.f_blocks = s.f_bsize, s.f_frsize, s.f_blocks
            r.f_bfree, r.f_bavail = s.f_bfree, s.f_bavail
            r.f_files, r.f_ffree, r.f_favail = s.f_files, s.f_ffree, s.f_favail
            r.f_namemax = 255
            return r

    async def control():
        # Commands from the supervisor on stdin; each runs between two requests, never inside one.
        stream = trio.lowlevel.FdStream(os.dup(0))
        buf = b""
        while True:
            chunk = await stream.receive_some()
            if not chunk:
                os._exit(3)
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = json.loads(line)
                if cmd["op"] == "stats":
                    dirty = [n for n in st.nodes.values() if n.dirty]
                    reply = {**st.stats, "dirty": len(dirty), "nodes": len(st.nodes)}
                else:  # cut or sync: persist what survives, then vanish without unmounting
                    reply = {**st.stats, **st.cut(cmd.get("keep", 0.0), cmd.get("seed", 0))}
                os.write(1, (json.dumps(reply) + "\n").encode())
                if cmd["op"] != "stats":
                    os._exit(0)

    options = set(pyfuse3.default_options)
    options |= {"fsname=powercut", "subtype=powercut", "allow_other"}
    pyfuse3.init(Ops(), mountpoint, options)
    os.write(1, b'{"ready": true}\n')

    async def main():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(control)
            # One worker task is enough (no handler waits on anything). pyfuse3 reads /dev/fuse
            # blocking once it is readable; a request of a writer killed meanwhile is withdrawn
            # by the kernel, and the read then holds the whole loop, control included, until the
            # next request: the supervisor makes one after each command (see `ask`).
            await pyfuse3.main(min_tasks=1, max_tasks=1)
            os._exit(0)

    trio.run(main)


class Supervisor:
    def __init__(self, backing, mountpoint):
        self.backing, self.mountpoint = backing, mountpoint
        self.child = None
        self.closing = False
        self.standby = self.spawn()
        self.totals = {"cuts": 0, "remounts": 0, "mounts": 0, "crashes": 0, "stuck": 0}

    def spawn(self):
        return subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "mount", self.backing, self.mountpoint],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def start(self):
        self.child, self.standby = self.standby, None
        self.child.stdin.write(b"go\n")
        self.child.stdin.flush()
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError("the mount failed (see the daemon's stderr)")
        self.totals["mounts"] += 1
        self.standby = self.spawn()

    def ask(self, cmd):
        if self.child.poll() is not None:
            self.totals["crashes"] += 1
            raise RuntimeError(f"the daemon died (status {self.child.returncode})")
        self.child.stdin.write((json.dumps(cmd) + "\n").encode())
        self.child.stdin.flush()
        threading.Thread(target=self.poke, daemon=True).start()
        if not select.select([self.child.stdout], [], [], ANSWER_S)[0]:
            # A daemon that does not answer is killed: for a cut, that is a cut that keeps
            # nothing unsynced (the durable state is on disk); anything else fails.
            self.child.kill()
            self.totals["stuck"] += 1
            if cmd["op"] == "cut":
                return {"stuck": True}
            raise RuntimeError(f"the daemon did not answer {cmd['op']} within {ANSWER_S} s")
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError("the daemon died before it answered")
        return json.loads(line)

    def poke(self):
        # A lookup of a name that is not there (never cached): a request that frees the daemon's
        # loop from a read of /dev/fuse whose request was withdrawn.
        try:
            os.stat(os.path.join(self.mountpoint, f".pcfs-wake-{random.getrandbits(64):x}"))
        except OSError:
            pass

    def unmount(self):
        self.child.wait()
        subprocess.run(["fusermount3", "-u", "-z", self.mountpoint], check=False,
                       stderr=subprocess.DEVNULL)

    def command(self, words):
        op, args = words[0], dict(w.split("=", 1) for w in words[1:])
        if op == "stats":
            return {**self.ask({"op": "stats"}), **self.totals}
        if op in ("cut", "remount", "stop"):
            cmd = {"op": "cut", "keep": float(args.get("keep", 0)), "seed": int(args.get("seed", 0))}
            reply = self.ask(cmd if op == "cut" else {"op": "sync", "keep": 1.0})
            self.unmount()
            self.totals["cuts" if op == "cut" else "remounts"] += op != "stop"
            if op != "stop":
                self.start()
            return {**reply, **self.totals}
        raise ValueError(f"unknown command {op!r}")

    def shutdown(self, *_):
        # The run that started this supervisor is gone (or asks it to go): unmount and leave,
        # waiting for nothing (the signal may come again while this runs).
        if self.closing:
            return
        self.closing = True
        for child in (self.child, self.standby):
            if child is not None and child.returncode is None:
                try:
                    os.kill(child.pid, signal.SIGKILL)
                except OSError:
                    pass
        subprocess.run(["fusermount3", "-u", "-z", self.mountpoint], check=False,
                       stderr=subprocess.DEVNULL)
        os._exit(0)

    def serve(self, control):
        signal.signal(signal.SIGTERM, self.shutdown)
        signal.signal(signal.SIGINT, self.shutdown)
        # SIGTERM when the process that started this one dies, however it dies.
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            self.shutdown()
        self.start()
        if os.path.exists(control):
            os.unlink(control)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(control)
        server.listen(8)
        print(json.dumps({"ready": True}), flush=True)
        while True:
            conn, _ = server.accept()
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                words = data.decode().split()
                try:
                    reply = {"ok": True, **self.command(words)}
                except Exception as e:  # noqa: BLE001 - every failure is answered, never raised
                    reply = {"ok": False, "error": str(e)}
                conn.sendall((json.dumps(reply) + "\n").encode())
                if words[:1] == ["stop"]:
                    self.standby.kill()
                    self.standby.wait()
                    server.close()
                    os.unlink(control)
                    return


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "serve":
        Supervisor(sys.argv[2], sys.argv[3]).serve(sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "mount":
        run_mount(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: pcfs.py serve BACKING MOUNTPOINT CONTROL | pcfs.py mount BACKING MOUNTPOINT")
