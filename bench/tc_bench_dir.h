/* tc_bench_dir.h — removing a benchmark's temporary cache directory (its
 * data.mdb, lock.mdb and generator lock; one level, no subdirectories).
 * Header-only, for bench/ programs. */
#ifndef TC_BENCH_DIR_H
#define TC_BENCH_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline void bench_remove_cache_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    char path[4608];
    while ((de = readdir(d))) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

#endif /* TC_BENCH_DIR_H */
