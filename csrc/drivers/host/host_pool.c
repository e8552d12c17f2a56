/* host_pool.c — the host driver's process-wide thread pool and run-time CPU feature detection.
 *
 * One pool per process, created on first use (pthread_once) with (online CPUs - 1) workers, or
 * TORCHTPU_NUM_THREADS - 1 when that is set (it counts the calling thread too). A parallel_for wakes every
 * worker, everyone (caller included) grabs chunks from a shared atomic counter; when the caller has no chunk
 * left it closes the job and waits only for the workers that joined it (a worker still waking up finds it closed:
 * on a VM a wake-up can take longer than the whole job, and the caller used to wait for it). A worker that
 * finishes looks for the next job for up to 100 us before it sleeps (and the caller for the workers before it
 * sleeps): a program's parallel nodes come back to back, and waking a sleeping worker costs more than a small
 * node's work (see pool_spin_ns). Only one job runs at a time: a second concurrent caller, or any call made from
 * inside a pool task, simply runs inline, so nothing can deadlock.
 */
#include "host_kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#endif

/* Used by the kernels in host_matmul_gemm.c; not declared in host_kernels.h (owned by another worker). */

#define POOL_MAX_THREADS 256

typedef struct pool_job {
    tt_host_range_fn fn;
    void *user;
    int64_t n, chunk;
    atomic_llong next; /* next unclaimed index */
} pool_job;

static struct {
    pthread_mutex_t lock;     /* guards the job pointer; gen and remaining change under it too */
    pthread_cond_t wake;      /* workers wait here for a new generation */
    pthread_cond_t done;      /* the submitter waits here for remaining == 0 */
    pthread_mutex_t submit;   /* one job at a time; others run inline */
    pool_job *job;
    _Atomic uint64_t gen;
    _Atomic int remaining;    /* workers that joined the current job and have not left it */
    int sleepers;             /* workers waiting on wake (under lock) */
    bool submitter_waits;     /* the submitter waits on done (under lock) */
    int n_workers;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, false, 0};

/* How long a worker looks for the next job (and the submitter for the workers) before sleeping on a futex:
 * TORCHTPU_POOL_SPIN_US, default 100. On this VM kind waking a sleeping vCPU took 30 to over 100 us (a 2 x 100 us
 * job often ran on the caller alone); with a 10 us spin the GPT training step (bench/models.py) took 56 ms, with
 * 50-300 us 45-50 ms. PyTorch's OpenMP pool spins longer still. */
#define POOL_SPIN_NS_DEFAULT 100000
static int64_t pool_spin_ns = POOL_SPIN_NS_DEFAULT;

static int64_t pool_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void pool_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins up to pool_spin_ns until done(arg) holds; returns whether it did. */
static bool pool_spin(bool (*done)(uint64_t), uint64_t arg) {
    int64_t until = pool_now_ns() + pool_spin_ns;
    for (;;) {
        for (int i = 0; i < 16; i++) {
            if (done(arg)) return true;
            pool_relax();
        }
        if (pool_now_ns() > until) return done(arg);
    }
}
static bool gen_moved(uint64_t seen) { return atomic_load_explicit(&pool.gen, memory_order_acquire) != seen; }
static bool workers_left(uint64_t unused) {
    (void)unused;
    return atomic_load_explicit(&pool.remaining, memory_order_acquire) == 0;
}

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static _Thread_local int pool_in_task; /* set while this thread runs pool work: nested calls run inline */

static void pool_run_chunks(pool_job *job) {
    for (;;) {
        int64_t b = (int64_t)atomic_fetch_add(&job->next, (long long)job->chunk);
        if (b >= job->n) break;
        int64_t e = b + job->chunk < job->n ? b + job->chunk : job->n;
        job->fn(job->user, b, e);
    }
}

static void *pool_worker(void *arg) {
    (void)arg;
    pool_in_task = 1; /* a worker never submits to its own pool */
    pthread_setname_np(pthread_self(), "tpu-host-pool");
    uint64_t seen = 0;
    for (;;) {
        pool_spin(gen_moved, seen);
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.gen) == seen) {
            pool.sleepers++;
            pthread_cond_wait(&pool.wake, &pool.lock);
            pool.sleepers--;
        }
        seen = atomic_load(&pool.gen);
        pool_job *job = pool.job; /* NULL: closed before this worker came */
        if (job) atomic_fetch_add(&pool.remaining, 1);
        pthread_mutex_unlock(&pool.lock);
        if (!job) continue;
        pool_run_chunks(job);
        pthread_mutex_lock(&pool.lock);
        if (atomic_fetch_sub(&pool.remaining, 1) == 1 && pool.submitter_waits) pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.lock);
    }
    return NULL;
}

/* The integer in environment variable name, at most hi; dflt when unset, not a number or below lo. */
static long long env_int(const char *name, long long lo, long long hi, long long dflt) {
    const char *env = getenv(name);
    if (!env || !*env) return dflt;
    char *end = NULL;
    long long v = strtoll(env, &end, 10);
    if (end == env || v < lo) return dflt;
    return v > hi ? hi : v;
}

static int pool_wanted_threads(void) {
    long long v = env_int("TORCHTPU_NUM_THREADS", 1, POOL_MAX_THREADS, 0);
    if (v > 0) return (int)v;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (int)n;
}

/* A forked child has none of the parent's workers: it runs everything inline from then on. */
static void pool_atfork_child(void) { pool.n_workers = 0; }

static void pool_init(void) {
    pthread_atfork(NULL, NULL, pool_atfork_child);
    pool_spin_ns = env_int("TORCHTPU_POOL_SPIN_US", 0, 1000000, POOL_SPIN_NS_DEFAULT / 1000) * 1000;
    int want = pool_wanted_threads() - 1;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < want; i++) {
        pthread_t t;
        /* A failed create just leaves a smaller pool: work still gets done by whoever exists. */
        if (pthread_create(&t, &attr, pool_worker, NULL) != 0) break;
        pool.n_workers++;
    }
    pthread_attr_destroy(&attr);
}

int tt_host_num_threads(void) {
    pthread_once(&pool_once, pool_init);
    return pool.n_workers + 1;
}

void tt_host_parallel_for(int64_t n, int64_t grain, tt_host_range_fn fn, void *user) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int nt = (n > grain && !pool_in_task) ? tt_host_num_threads() : 1;
    if (nt <= 1 || pthread_mutex_trylock(&pool.submit) != 0) {
        fn(user, 0, n);
        return;
    }
    /* About four chunks per thread for balance, never below grain. */
    int64_t chunk = (n + (int64_t)nt * 4 - 1) / ((int64_t)nt * 4);
    if (chunk < grain) chunk = grain;
    pool_job job;
    job.fn = fn;
    job.user = user;
    job.n = n;
    job.chunk = chunk;
    atomic_init(&job.next, 0);

    pthread_mutex_lock(&pool.lock);
    pool.job = &job;
    atomic_store(&pool.remaining, 0);
    atomic_fetch_add(&pool.gen, 1);
    if (pool.sleepers) pthread_cond_broadcast(&pool.wake); /* spinning workers see gen move by themselves */
    pthread_mutex_unlock(&pool.lock);

    pool_in_task = 1;
    pool_run_chunks(&job);
    pool_in_task = 0;

    pthread_mutex_lock(&pool.lock); /* closed: no worker joins from now on; the job may go once the joined left */
    pool.job = NULL;
    pthread_mutex_unlock(&pool.lock);
    if (!pool_spin(workers_left, 0)) {
        pthread_mutex_lock(&pool.lock);
        pool.submitter_waits = true;
        while (atomic_load(&pool.remaining) > 0) pthread_cond_wait(&pool.done, &pool.lock);
        pool.submitter_waits = false;
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.submit);
}

/* ---- CPU features ------------------------------------------------------------------------------------ */

static char cpu_features[128];
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
static uint64_t cpu_xgetbv0(void) {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}
#endif

static void cpu_detect(void) {
    char *s = cpu_features;
    size_t cap = sizeof cpu_features;
    s[0] = '\0';
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    int osxsave = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27));
    uint64_t xcr0 = osxsave ? cpu_xgetbv0() : 0;
    int os_avx = (xcr0 & 0x6) == 0x6;         /* XMM and YMM state */
    int os_avx512 = (xcr0 & 0xe6) == 0xe6;    /* plus opmask, ZMM_Hi256, Hi16_ZMM */
    __builtin_cpu_init();
    int avx512f = os_avx512 && __builtin_cpu_supports("avx512f");
    int avx512bw = os_avx512 && __builtin_cpu_supports("avx512bw");
    int avx512vl = os_avx512 && __builtin_cpu_supports("avx512vl");
    int bf16 = 0;
    if (avx512f && avx512bw && avx512vl && __get_cpuid_count(7, 1, &a, &b, &c, &d)) bf16 = (a >> 5) & 1;
    int avx2 = os_avx && __builtin_cpu_supports("avx2");
    int fma = os_avx && __builtin_cpu_supports("fma");
    /* AMX: the bf16 and tile instructions, the OS saving tile state (XCR0 bits 17, 18), and the kernel granting
     * this process the tile data state (Linux asks for it: ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA). */
    int amx = 0;
    if (bf16 && (xcr0 & 0x60000) == 0x60000 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 22 & 1) &&
        (d >> 24 & 1))
        amx = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
    snprintf(s, cap, "%s%s%s%s%s", amx ? "amx " : "", bf16 ? "avx512bf16 " : "", avx512f ? "avx512f " : "",
             avx2 ? "avx2 " : "", fma ? "fma " : "");
    size_t len = strlen(s);
    if (len > 0) s[len - 1] = '\0'; /* drop the trailing space */
#else
    (void)cap;
#endif
}

const char *tt_host_cpu_features(void) {
    pthread_once(&cpu_once, cpu_detect);
    return cpu_features;
}

/* Whole-word membership test in tt_host_cpu_features(); TORCHTPU_HOST_ISA=portable|avx2|avx512f|avx512bf16 caps
 * it so every kernel path can be tested on one machine. */
int tt_host_cpu_has(const char *feature) {
    static const char *order[] = {"portable", "fma", "avx2", "avx512f", "avx512bf16", "amx"};
    const char *cap = getenv("TORCHTPU_HOST_ISA");
    if (cap && *cap) {
        int ci = -1, fi = -1;
        for (int i = 0; i < 6; i++) {
            if (strcmp(cap, order[i]) == 0) ci = i;
            if (strcmp(feature, order[i]) == 0) fi = i;
        }
        if (ci >= 0 && fi > ci) return 0;
    }
    const char *f = tt_host_cpu_features();
    size_t n = strlen(feature);
    for (const char *p = f; (p = strstr(p, feature)) != NULL; p += n) {
        if ((p == f || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    }
    return 0;
}
