/* A bare C event loop: the anchor for the fast engine's speed (issue 35, "The engine").
 *
 * benchmarks/anchor.py compiles this (cc -O2, C99, no dependencies), writes the
 * model's parameters to its stdin and runs it beside pathsel's fast engine.
 *
 * WHAT IT MODELS: what the fast engine models on the engine benchmark (seed
 * 004's test drive, benchmarks/engines.py), a closed loop of SCSI writes:
 *   - one job of `iodepth` slots; each slot issues its next write the moment the
 *     last one completes (a uniform draw picks read or write, as pathsel's job
 *     stream does: the read fraction is 0 here, so every I/O is a write);
 *   - a policy picks a path (called through a function pointer, as the fast
 *     engine calls a policy's compiled entry point by address): round robin
 *     switching after `iops` I/Os or `bytes` bytes (rr:iops=N, rr:bytes=N), or
 *     always the first path (fixed, mru: on this scenario every I/O takes path 0);
 *   - each write is four frames over its path (command, XFER_RDY, data, status),
 *     each a timed event after the path's one-way latency; the data frame also
 *     queues FIFO on the path's wire to the array and is serialised at the path's
 *     bandwidth;
 *   - the data reaches the path's array: it takes one of the array's
 *     `concurrency` slots (or waits FIFO for one), is served for an exponential
 *     time; at the same moment the copy leaves over the replication link (one
 *     way, constant), takes a slot at the peer array, is served there
 *     (exponential), and the acknowledgement comes back over the link;
 *   - the status frame leaves once both the local service and the mirror's
 *     acknowledgement are done; when it reaches the host the I/O completes:
 *     counted, and inside the measurement window (after the ramp) its latency is
 *     added to a sum, a log-binned histogram and its path's count;
 *   - the events: an 8-ary heap of (time, id << 8 | kind, slot), ties broken by
 *     id (creation order), and an event that schedules a timeout replaces the
 *     root instead of a pop and a push, as the fast engine does. Per write:
 *     4 frame arrivals, the local service's end, the mirror's arrival at the
 *     peer, the peer's service end, the acknowledgement: 8 events, 8 heap
 *     insertions (7 of them replacing the root), 1 pop. The fast engine
 *     processes the same 8 per I/O on this scenario (counted with an
 *     instrumented copy: 4 EV_LEG, EV_SVC_MAIN, EV_M_FWD, EV_M_SVC, EV_M_ACK).
 *
 * WHAT IT DOES NOT MODEL (so it costs nothing here): reads, other service
 * distributions, path or controller faults and the host's io_timeout (30 s,
 * longer than the run here), QUEUE FULL, host and port queues (unlimited on this
 * scenario), frame loss, framing, fabric, CPU, NUMA, the time series per
 * interval, per-path histograms, KAVG/DAVG, in-flight integrals, traces, the
 * event log, and pathsel's stopping to refill its rows of pre-drawn random
 * values: here each draw is computed where it is used (xoshiro256**, and -log
 * for an exponential). Random numbers differ from pathsel's, so figures agree
 * statistically (IOPS within a few %), not exactly.
 *
 * stdin: duration ramp iodepth seed policy(0 rr, 1 first path) rr_iops rr_bytes
 *        size read_fraction repl_one_way n_arrays n_paths; then per array:
 *        concurrency service_mean peer; then per path: array one_way bandwidth.
 * stdout: key value lines (anchor.py reads them).
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EV_LEG = 1, EV_SVC, EV_M_FWD, EV_M_SVC, EV_M_ACK };
enum { ST_CMD, ST_XFER, ST_DATA, ST_SVC, ST_STATUS };
#define KIND_BITS 8
#define ARITY 8
#define NBINS 1024

typedef struct { double t; uint64_t key; int64_t arg; } ev_t;

typedef struct {
    int stage, path, svc_done, mirror_done;
    double issued;
    uint32_t size;
} slot_t;

typedef struct {
    int concurrency, busy, peer;
    double mean;
    int *wait_slot, *wait_mirror; /* FIFO of slots waiting for a place: ring of n_slots */
    int head, tail, cap;
} array_t;

typedef struct {
    int array;
    double lat, bw;
    double wire_free[2];
    long n;
    double lat_sum;
} path_t;

typedef struct {
    int kind, n_paths, iops, cur, count;
    long bytes, sent;
} policy_t;

/* state */
static ev_t *heap;
static long heapn, heapcap;
static int htop; /* the root is the event being processed: the next push replaces it */
static uint64_t eid;
static double now;
static slot_t *slots;
static array_t *arrays;
static path_t *paths;
static int n_paths, n_arrays;
static double repl_lat, ramp, end_t, read_frac;
static long completed, win_n, events, pushes, replaces, pops;
static double win_sum;
static long hist[NBINS];
static uint64_t rs[4];

/* xoshiro256** (Blackman and Vigna, 2018) */
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t next_u64(void) {
    uint64_t r = rotl(rs[1] * 5, 7) * 9, t = rs[1] << 17;
    rs[2] ^= rs[0]; rs[3] ^= rs[1]; rs[1] ^= rs[2]; rs[0] ^= rs[3]; rs[2] ^= t; rs[3] = rotl(rs[3], 45);
    return r;
}
static inline double uniform(void) { return (double)(next_u64() >> 11) * 0x1.0p-53; }
static inline double expo(double mean) { return -mean * log1p(-uniform()); }

/* -- the heap ------------------------------------------------------------------------------------------ */
static inline int before(const ev_t *a, double t, uint64_t k) { return a->t < t || (a->t == t && a->key < k); }

static inline long min_child(long c) {
    /* the smallest of the eight children c .. c + 7 without branches (every slot past the last holds +inf):
       which child wins is a coin toss for the branch predictor; keys only on a tie of times */
    const ev_t *h = heap + c;
    long m01 = h[1].t < h[0].t, m23 = 2 + (h[3].t < h[2].t), m45 = 4 + (h[5].t < h[4].t), m67 = 6 + (h[7].t < h[6].t);
    long ma = h[m23].t < h[m01].t ? m23 : m01, mb = h[m67].t < h[m45].t ? m67 : m45;
    long m = h[mb].t < h[ma].t ? mb : ma;
    double tm = h[m].t;
    int ties = 0;
    for (int j = 0; j < ARITY; j++) ties += h[j].t == tm;
    if (ties > 1)
        for (int j = 0; j < ARITY; j++)
            if (h[j].t == tm && h[j].key < h[m].key) m = j;
    return c + m;
}

static inline void sift_down(long i, ev_t e) {
    long c;
    while ((c = ARITY * i + 1) < heapn) {
        long m = min_child(c);
        if (!before(&heap[m], e.t, e.key)) break;
        heap[i] = heap[m];
        i = m;
    }
    heap[i] = e;
}

static inline void push(double t, int kind, int64_t arg) {
    ev_t e = {t, (eid++ << KIND_BITS) | (uint64_t)kind, arg};
    pushes++;
    if (htop) { /* pop the root and push in one pass */
        htop = 0;
        replaces++;
        sift_down(0, e);
        return;
    }
    if (heapn + ARITY * ARITY + 1 >= heapcap) { /* room for a full row of +inf children past the last entry */
        heap = realloc(heap, 2 * (size_t)heapcap * sizeof *heap);
        if (!heap) { perror("realloc"); exit(1); }
        for (long j = heapcap; j < 2 * heapcap; j++) heap[j].t = INFINITY;
        heapcap *= 2;
    }
    long i = heapn++;
    while (i > 0) {
        long parent = (i - 1) / ARITY;
        if (before(&heap[parent], t, e.key)) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

static inline void pop(void) {
    pops++;
    ev_t last = heap[--heapn];
    heap[heapn].t = INFINITY;
    if (heapn > 0) sift_down(0, last);
}

/* -- the policy, by address ---------------------------------------------------------------------------- */
static int select_rr(policy_t *p, uint32_t size) {
    /* rr: switch to the next path after `iops` I/Os (or `bytes` bytes) on this one */
    if (p->iops > 0 ? p->count >= p->iops : p->sent >= p->bytes) {
        p->cur = (p->cur + 1) % p->n_paths;
        p->count = 0;
        p->sent = 0;
    }
    p->count++;
    p->sent += size;
    return p->cur;
}
static int select_first(policy_t *p, uint32_t size) { (void)p; (void)size; return 0; }

static int (*select_path)(policy_t *, uint32_t);
static policy_t pol;

/* -- an I/O's life -------------------------------------------------------------------------------------- */
static inline void leg(int s, int dir, uint32_t nbytes) {
    path_t *p = &paths[slots[s].path];
    double delay = p->lat;
    if (nbytes) { /* FIFO on the path's wire in this direction, serialised at its bandwidth */
        double start = now > p->wire_free[dir] ? now : p->wire_free[dir];
        double done = start + nbytes / p->bw;
        p->wire_free[dir] = done;
        delay += done - now;
    }
    push(now + delay, EV_LEG, s);
}

static void new_io(int s) {
    slot_t *sl = &slots[s];
    double u = uniform(); /* read or write, as pathsel's job stream draws it */
    if (u < read_frac) { fprintf(stderr, "anchor: reads are not modelled\n"); exit(2); }
    sl->issued = now;
    sl->path = select_path(&pol, sl->size);
    sl->stage = ST_CMD;
    sl->svc_done = sl->mirror_done = 0;
    leg(s, 0, 0);
}

static inline void serve(int a, int s, int mirror) {
    if (mirror) push(now + expo(arrays[a].mean), EV_M_SVC, s);
    else push(now + expo(arrays[a].mean), EV_SVC, s);
}

static inline void take(int a, int s, int mirror) {
    array_t *ar = &arrays[a];
    if (ar->busy < ar->concurrency && ar->head == ar->tail) {
        ar->busy++;
        serve(a, s, mirror);
    } else {
        int i = ar->tail++ % ar->cap;
        ar->wait_slot[i] = s;
        ar->wait_mirror[i] = mirror;
    }
}

static inline void release(int a) {
    array_t *ar = &arrays[a];
    if (ar->head < ar->tail) { /* the next in line takes the place */
        int i = ar->head++ % ar->cap;
        serve(a, ar->wait_slot[i], ar->wait_mirror[i]);
    } else {
        ar->busy--;
    }
}

static inline void complete(int s) {
    slot_t *sl = &slots[s];
    completed++;
    if (now >= ramp) {
        double lat = now - sl->issued;
        win_n++;
        win_sum += lat;
        int b = lat > 0 ? (int)(log2(lat * 1e9) * 32.0) : 0; /* 32 bins per power of two, from 1 ns */
        hist[b < 0 ? 0 : b >= NBINS ? NBINS - 1 : b]++;
        paths[sl->path].n++;
        paths[sl->path].lat_sum += lat;
    }
    new_io(s);
}

static void status_leg(int s) {
    slots[s].stage = ST_STATUS;
    leg(s, 1, 0);
}

static void on_leg(int s) {
    slot_t *sl = &slots[s];
    switch (sl->stage) {
    case ST_CMD: sl->stage = ST_XFER; leg(s, 1, 0); break;
    case ST_XFER: sl->stage = ST_DATA; leg(s, 0, sl->size); break;
    case ST_DATA: {
        int a = paths[sl->path].array;
        sl->stage = ST_SVC;
        take(a, s, 0);
        if (arrays[a].peer >= 0) push(now + repl_lat, EV_M_FWD, s);
        else sl->mirror_done = 1;
        break;
    }
    default: complete(s); break;
    }
}

int main(void) {
    double duration;
    int iodepth, policy, rr_iops;
    long rr_bytes;
    unsigned long long seed;
    unsigned size;
    if (scanf("%lf %lf %d %llu %d %d %ld %u %lf %lf %d %d", &duration, &ramp, &iodepth, &seed, &policy, &rr_iops, &rr_bytes,
              &size, &read_frac, &repl_lat, &n_arrays, &n_paths) != 12) {
        fprintf(stderr, "anchor: bad parameters on stdin\n");
        return 2;
    }
    arrays = calloc((size_t)n_arrays, sizeof *arrays);
    paths = calloc((size_t)n_paths, sizeof *paths);
    slots = calloc((size_t)iodepth, sizeof *slots);
    for (int a = 0; a < n_arrays; a++) {
        array_t *ar = &arrays[a];
        if (scanf("%d %lf %d", &ar->concurrency, &ar->mean, &ar->peer) != 3) return 2;
        ar->cap = 2 * iodepth;
        ar->wait_slot = calloc((size_t)ar->cap, sizeof(int));
        ar->wait_mirror = calloc((size_t)ar->cap, sizeof(int));
    }
    for (int p = 0; p < n_paths; p++)
        if (scanf("%d %lf %lf", &paths[p].array, &paths[p].lat, &paths[p].bw) != 3) return 2;

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t z = seed + 0x9E3779B97F4A7C15ull; /* splitmix64 seeds the generator */
    for (int i = 0; i < 4; i++) {
        z += 0x9E3779B97F4A7C15ull;
        uint64_t x = z;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        rs[i] = x ^ (x >> 31);
    }
    heapcap = 4 * iodepth + 2 * ARITY * ARITY + 16;
    heap = malloc((size_t)heapcap * sizeof *heap);
    for (long j = 0; j < heapcap; j++) heap[j].t = INFINITY;
    pol.n_paths = n_paths;
    pol.iops = rr_iops;
    pol.bytes = rr_bytes;
    pol.cur = 0;
    pol.count = 0;
    pol.sent = 0;
    select_path = policy == 0 ? select_rr : select_first;
    end_t = duration;
    for (int s = 0; s < iodepth; s++) {
        slots[s].size = size;
        new_io(s);
    }
    while (heapn > 0) {
        ev_t e = heap[0];
        if (e.t >= end_t) break;
        now = e.t;
        htop = 1;
        events++;
        int s = (int)e.arg;
        slot_t *sl = &slots[s];
        switch ((int)(e.key & ((1u << KIND_BITS) - 1))) {
        case EV_LEG: on_leg(s); break;
        case EV_SVC:
            release(paths[sl->path].array);
            sl->svc_done = 1;
            if (sl->mirror_done) status_leg(s);
            break;
        case EV_M_FWD: take(arrays[paths[sl->path].array].peer, s, 1); break;
        case EV_M_SVC:
            release(arrays[paths[sl->path].array].peer);
            push(now + repl_lat, EV_M_ACK, s);
            break;
        case EV_M_ACK:
            sl->mirror_done = 1;
            if (sl->svc_done) status_leg(s);
            break;
        }
        if (htop) { /* it scheduled nothing: the root goes */
            htop = 0;
            pop();
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    long hsum = 0;
    for (int b = 0; b < NBINS; b++) hsum += hist[b];
    printf("completed %ld\nwindow_completed %ld\nmean_latency %.9g\nwindow %.9g\n", completed, win_n, win_n ? win_sum / win_n : 0.0,
           end_t - ramp);
    printf("events %ld\npushes %ld\nreplaces %ld\npops %ld\nwall %.9g\nhist_check %ld\n", events, pushes, replaces, pops, wall, hsum);
    printf("path_counts");
    for (int p = 0; p < n_paths; p++) printf(" %ld", paths[p].n);
    printf("\n");
    return 0;
}
