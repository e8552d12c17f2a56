/* diskcache.c — the persistent compile cache: executables a driver can serialize, on disk across processes.
 *
 * An entry is one file, <dir>/<32 hex digits>.ttc, named by a 128-bit hash of its key text (format version,
 * driver identity, torchtpu version, the program as StableHLO — precision included). Layout: the magic
 * "TTPC0001", key length, payload length, a 64-bit checksum of key and payload (little-endian u64s), then the
 * key and the payload. A read checks the magic, that the lengths add up to the file's size (truncated), the
 * checksum (corrupt) and the key bytes (a hash collision or stale entry): a bad entry is counted, removed and
 * rebuilt, never trusted. A write goes to a private temporary file in the same directory and is renamed over the
 * name, so readers in any process see a whole entry or none, and concurrent writers of one key leave one of
 * theirs. After a write the directory is kept under its byte bound by removing the entries read least recently
 * (a read touches the file's mtime); temporary files older than an hour (a crash mid-write) go too.
 *
 * Disk trouble is never an error for the caller: it is counted (errors) and the program is compiled as if the
 * entry were absent. Configuration (tt_rt_disk_configure, at init): TORCHTPU_CACHE_DIR (a path, or "off"),
 * Google's TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT as an alias, default $XDG_CACHE_HOME/torchtpu or
 * ~/.cache/torchtpu; TORCHTPU_CACHE_DISK_BYTES bounds it (default 2 GiB). */
#include "rt_internal.h"

#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DC_MAGIC "TTPC0001"
#define DC_HEADER 32 /* magic, key length, payload length, checksum */
#define DC_PATH 4096
#define DC_DIR 3584 /* the directory's path leaves room for a file name in DC_PATH */
#define DC_DEFAULT_BYTES (2ull << 30)

static struct {
    char dir[DC_DIR]; /* "" = off */
    unsigned long long max_bytes;
    _Atomic int64_t hits, misses, writes, corrupt, evictions, errors;
    _Atomic uint64_t tmp_seq;
} dc;

static uint64_t fnv(const void *p, size_t n, uint64_t h) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t checksum(const void *key, size_t klen, const void *payload, size_t n) {
    return fnv(payload, n, fnv(key, klen, 1469598103934665603ull));
}

/* mkdir -p; true when the directory exists afterwards. */
static bool make_dirs(const char *path) {
    char buf[DC_PATH];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode);
}

tt_status tt_rt_disk_configure(void) {
    dc.dir[0] = 0;
    dc.max_bytes = DC_DEFAULT_BYTES;
    const char *b = getenv("TORCHTPU_CACHE_DISK_BYTES");
    if (b && *b) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(b, &end, 10);
        if (errno || !end || *end || b[0] == '-')
            return tt_error(TT_STATUS_INVALID_ARGUMENT,
                            "TORCHTPU_CACHE_DISK_BYTES='%s' must be a number of bytes (0 = no persistent cache)", b);
        dc.max_bytes = v;
    }
    const char *d = getenv("TORCHTPU_CACHE_DIR");
    if (!d || !*d) d = getenv("TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT");
    char def[DC_DIR];
    if (!d || !*d) {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && *xdg) snprintf(def, sizeof def, "%s/torchtpu", xdg);
        else if (home && *home) snprintf(def, sizeof def, "%s/.cache/torchtpu", home);
        else return TT_OK; /* nowhere to keep it: off */
        d = def;
    }
    if (!strcmp(d, "off") || dc.max_bytes == 0) return TT_OK;
    if (strlen(d) >= sizeof dc.dir)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "TORCHTPU_CACHE_DIR is longer than %zu bytes", sizeof dc.dir - 1);
    snprintf(dc.dir, sizeof dc.dir, "%s", d); /* created at the first write */
    return TT_OK;
}

bool tt_rt_disk_on(void) { return dc.dir[0] != 0; }

static void entry_path(char *out, size_t size, const char *key, size_t klen) {
    uint64_t a = fnv(key, klen, 1469598103934665603ull), b = fnv(key, klen, 0x84222325cbf29ce4ull ^ klen);
    snprintf(out, size, "%s/%016llx%016llx.ttc", dc.dir, (unsigned long long)a, (unsigned long long)b);
}

static bool read_all(int fd, void *buf, size_t n) {
    unsigned char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r, n -= (size_t)r;
    }
    return true;
}
static bool write_all(int fd, const void *buf, size_t n) {
    const unsigned char *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r, n -= (size_t)r;
    }
    return true;
}

/* A bad entry: counted, removed (another process may have removed or replaced it already: fine). */
static void drop_corrupt(const char *path) {
    atomic_fetch_add(&dc.corrupt, 1);
    unlink(path);
}

void tt_rt_disk_get(const char *key, size_t klen, void **payload, size_t *n) {
    *payload = NULL;
    *n = 0;
    if (!tt_rt_disk_on()) return;
    char path[DC_PATH];
    entry_path(path, sizeof path, key, klen);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        atomic_fetch_add(&dc.misses, 1);
        if (errno != ENOENT) atomic_fetch_add(&dc.errors, 1);
        return;
    }
    struct stat st;
    unsigned char h[DC_HEADER];
    char *kbuf = NULL;
    void *pbuf = NULL;
    if (fstat(fd, &st) != 0 || st.st_size < DC_HEADER || !read_all(fd, h, DC_HEADER) || memcmp(h, DC_MAGIC, 8))
        goto corrupt;
    uint64_t kl = get_u64(h + 8), pl = get_u64(h + 16), sum = get_u64(h + 24);
    if (kl != klen || pl > (uint64_t)st.st_size || (uint64_t)st.st_size != DC_HEADER + kl + pl) {
        if (kl != klen && (uint64_t)st.st_size == DC_HEADER + kl + pl) goto other; /* a whole entry, other key */
        goto corrupt;                                                             /* truncated or padded */
    }
    kbuf = malloc(klen ? klen : 1);
    pbuf = malloc(pl ? pl : 1);
    if (!kbuf || !pbuf) {
        atomic_fetch_add(&dc.errors, 1);
        goto miss;
    }
    if (!read_all(fd, kbuf, klen) || !read_all(fd, pbuf, pl) || checksum(kbuf, klen, pbuf, pl) != sum) goto corrupt;
    if (memcmp(kbuf, key, klen)) goto other;
    close(fd);
    free(kbuf);
    utimensat(AT_FDCWD, path, NULL, 0); /* read recently: evicted last */
    atomic_fetch_add(&dc.hits, 1);
    *payload = pbuf;
    *n = pl;
    return;
corrupt:
    close(fd);
    fd = -1;
    drop_corrupt(path);
    goto miss;
other: /* a different program under the same name: a miss; the write that follows replaces it */
miss:
    if (fd >= 0) close(fd);
    free(kbuf);
    free(pbuf);
    atomic_fetch_add(&dc.misses, 1);
}

typedef struct dc_file {
    char name[64];
    off_t size;
    struct timespec mtime;
} dc_file;

static int by_mtime(const void *a, const void *b) {
    const dc_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Keeps the directory's entries under the bound (to 90% of it once over, so that not every write scans again
 * at the edge), least recently read first; removes temporary files a crash left. */
static void evict(void) {
    DIR *d = opendir(dc.dir);
    if (!d) {
        atomic_fetch_add(&dc.errors, 1);
        return;
    }
    dc_file *files = NULL;
    size_t n = 0, cap = 0;
    unsigned long long total = 0;
    time_t now = time(NULL);
    char path[DC_PATH];
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        bool entry = len == 36 && !strcmp(e->d_name + 32, ".ttc"), tmp = strstr(e->d_name, ".ttc.tmp.") != NULL;
        if ((!entry && !tmp) || len >= sizeof files->name) continue;
        snprintf(path, sizeof path, "%s/%s", dc.dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (tmp) {
            if (now - st.st_mtime > 3600) unlink(path);
            continue;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            dc_file *nf = realloc(files, nc * sizeof *nf);
            if (!nf) {
                atomic_fetch_add(&dc.errors, 1);
                break;
            }
            files = nf, cap = nc;
        }
        memcpy(files[n].name, e->d_name, len + 1); /* len < sizeof name: checked above */
        files[n].size = st.st_size;
        files[n].mtime = st.st_mtim;
        total += (unsigned long long)st.st_size;
        n++;
    }
    closedir(d);
    if (total > dc.max_bytes) {
        qsort(files, n, sizeof *files, by_mtime);
        unsigned long long target = dc.max_bytes / 10 * 9;
        for (size_t i = 0; i < n && total > target; i++) {
            snprintf(path, sizeof path, "%s/%s", dc.dir, files[i].name);
            if (unlink(path) == 0) atomic_fetch_add(&dc.evictions, 1);
            total -= (unsigned long long)files[i].size;
        }
    }
    free(files);
}

void tt_rt_disk_put(const char *key, size_t klen, const void *payload, size_t n) {
    if (!tt_rt_disk_on()) return;
    if ((unsigned long long)n + klen + DC_HEADER > dc.max_bytes) return; /* would evict everything, itself too */
    if (!make_dirs(dc.dir)) {
        atomic_fetch_add(&dc.errors, 1);
        return;
    }
    char path[DC_PATH], tmp[DC_PATH + 64];
    entry_path(path, sizeof path, key, klen);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%llu", path, (long)getpid(),
             (unsigned long long)atomic_fetch_add(&dc.tmp_seq, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        atomic_fetch_add(&dc.errors, 1);
        return;
    }
    unsigned char h[DC_HEADER];
    memcpy(h, DC_MAGIC, 8);
    put_u64(h + 8, klen);
    put_u64(h + 16, n);
    put_u64(h + 24, checksum(key, klen, payload, n));
    bool ok = write_all(fd, h, DC_HEADER) && write_all(fd, key, klen) && write_all(fd, payload, n);
    ok = (close(fd) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        atomic_fetch_add(&dc.errors, 1);
        return;
    }
    atomic_fetch_add(&dc.writes, 1);
    evict();
}

void tt_rt_disk_stats_get(tt_rt_disk_stats *out) {
    memset(out, 0, sizeof *out);
    out->hits = atomic_load(&dc.hits);
    out->misses = atomic_load(&dc.misses);
    out->writes = atomic_load(&dc.writes);
    out->corrupt = atomic_load(&dc.corrupt);
    out->evictions = atomic_load(&dc.evictions);
    out->errors = atomic_load(&dc.errors);
    out->max_bytes = dc.max_bytes;
    out->dir = dc.dir;
    const tt_driver *drv = tt_rt_g.driver;
    out->active = tt_rt_disk_on() && drv && TT_RT_HAS_MEMBER(&drv->iface, executable_serialize) &&
                  TT_RT_HAS_MEMBER(&drv->iface, executable_deserialize);
}

void tt_rt_disk_reset_stats(void) {
    atomic_store(&dc.hits, 0);
    atomic_store(&dc.misses, 0);
    atomic_store(&dc.writes, 0);
    atomic_store(&dc.corrupt, 0);
    atomic_store(&dc.evictions, 0);
    atomic_store(&dc.errors, 0);
}
