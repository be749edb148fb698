/*
 * An LD_PRELOAD shim for the power-cut tests, breaking from outside the syncs the file backend's
 * durability rests on, so the power-cut run can show that it notices:
 * - POWERCUT_SKIP_FSYNC=dirs: fsync and fdatasync of a directory do nothing (and succeed);
 *   POWERCUT_SKIP_FSYNC=files: those of a regular file do nothing.
 * - POWERCUT_STALL_FSYNC=<ms>:<text>: a sync of a file or directory whose path contains <text>
 *   (ends with it, when <text> ends with '$') first sleeps <ms> milliseconds (a slow disk), so a
 *   cut can fall inside that sync.
 * Everything else goes to libc. Built by tests/powercut/_shim.ts with the system's gcc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int skipped(int fd) {
  const char *what = getenv("POWERCUT_SKIP_FSYNC");
  struct stat st;
  if (what == NULL || fstat(fd, &st) != 0) return 0;
  if (S_ISDIR(st.st_mode)) return strcmp(what, "dirs") == 0;
  if (S_ISREG(st.st_mode)) return strcmp(what, "files") == 0;
  return 0;
}

static void stall(int fd) {
  const char *spec = getenv("POWERCUT_STALL_FSYNC");
  const char *colon = spec == NULL ? NULL : strchr(spec, ':');
  char link[64], path[4096];
  if (colon == NULL) return;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) return;
  path[n] = '\0';
  const char *text = colon + 1;
  size_t len = strlen(text);
  if (len > 0 && text[len - 1] == '$') {
    len--;
    if ((size_t)n < len || strncmp(path + n - len, text, len) != 0) return;
  } else if (strstr(path, text) == NULL) return;
  long ms = atol(spec);
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The real call `name` (found once, into `*real`), unless this descriptor's sync is skipped. */
static int through(int fd, const char *name, int (**real)(int)) {
  if (skipped(fd)) return 0;
  stall(fd);
  if (*real == NULL) *real = (int (*)(int))dlsym(RTLD_NEXT, name);
  return (*real)(fd);
}

int fsync(int fd) {
  static int (*real)(int);
  return through(fd, "fsync", &real);
}

int fdatasync(int fd) {
  static int (*real)(int);
  return through(fd, "fdatasync", &real);
}
