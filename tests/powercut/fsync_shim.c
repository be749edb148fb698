/*
 * An LD_PRELOAD shim for the power-cut tests: with POWERCUT_SKIP_FSYNC=dirs, fsync and fdatasync
 * of a directory do nothing (and report success); with POWERCUT_SKIP_FSYNC=files, those of a
 * regular file do nothing. Everything else goes to libc. It breaks, from outside, the syncs the
 * file backend's durability rests on, so the power-cut run can show that it notices.
 * Built by tests/powercut/_shim.ts with the system's gcc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int skipped(int fd) {
  const char *what = getenv("POWERCUT_SKIP_FSYNC");
  struct stat st;
  if (what == NULL || fstat(fd, &st) != 0) return 0;
  if (S_ISDIR(st.st_mode)) return strcmp(what, "dirs") == 0;
  if (S_ISREG(st.st_mode)) return strcmp(what, "files") == 0;
  return 0;
}

int fsync(int fd) {
  static int (*real)(int);
  if (skipped(fd)) return 0;
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (skipped(fd)) return 0;
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return real(fd);
}
