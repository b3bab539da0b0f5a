/*
 * clock.c - the report clock (CLOCK_MONOTONIC ns), read cheaply: cl_now().
 */
#include "internal.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * The clock.  Reports use CLOCK_MONOTONIC.  clock_gettime() costs 20-70 ns
 * here, two per NVTX range, so on x86-64 with the kernel's own clocksource
 * on the TSC, cl_now() reads the TSC and converts it with a line that the
 * writer thread keeps fitted to CLOCK_MONOTONIC (cl_clock_calibrate(): the line
 * stays continuous and its slope absorbs the measured error within one
 * calibration interval, so the two clocks agree to well under 1 us).  Until
 * the first fit (20 ms after start), and elsewhere, clock_gettime() it is.
 * Parameters are published under a sequence lock; GPUSCOPE_CLOCK=monotonic
 * turns the TSC path off.
 */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>
#define CL_HAVE_TSC 1
static struct {
	_Atomic uint32_t seq;
	_Atomic uint64_t tsc, ns;   /* a point of the line */
	_Atomic uint64_t mult;      /* ns per tick, 32.32 fixed point */
} clk;
static _Atomic int clk_on;      /* the line is published */
static int clk_allowed;         /* TSC is the kernel's clocksource */
static uint64_t cal_tsc, cal_ns; /* last calibration pair (writer only) */

static inline uint64_t clk_convert(uint64_t t, uint64_t base_tsc, uint64_t base_ns, uint64_t mult)
{
	int64_t d = (int64_t)(t - base_tsc);
	__int128 x = (__int128)d * (__int128)mult;

	return base_ns + (uint64_t)(int64_t)(x >> 32);
}

static inline uint64_t clk_now(void)
{
	uint32_t s;
	uint64_t r;

	do {
		s = atomic_load_explicit(&clk.seq, memory_order_acquire);
		r = clk_convert(__rdtsc(), atomic_load_explicit(&clk.tsc, memory_order_relaxed),
				atomic_load_explicit(&clk.ns, memory_order_relaxed),
				atomic_load_explicit(&clk.mult, memory_order_relaxed));
		atomic_thread_fence(memory_order_acquire);
	} while ((s & 1) || s != atomic_load_explicit(&clk.seq, memory_order_relaxed));
	return r;
}

/* A (tsc, monotonic ns) pair, the tightest of three tries. */
static void clk_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	/* the first try always wins; set here too so that -O3 sees them set */
	*tsc = 0;
	*ns = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t a = mono_ns(), t = __rdtsc(), b = mono_ns();
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

static void clk_publish(uint64_t tsc, uint64_t ns, uint64_t mult)
{
	atomic_fetch_add_explicit(&clk.seq, 1, memory_order_acq_rel);
	atomic_store_explicit(&clk.tsc, tsc, memory_order_relaxed);
	atomic_store_explicit(&clk.ns, ns, memory_order_relaxed);
	atomic_store_explicit(&clk.mult, mult, memory_order_relaxed);
	atomic_fetch_add_explicit(&clk.seq, 1, memory_order_release);
}

void cl_clock_init(void)
{
	char src[32] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, src, sizeof(src) - 1);
		src[n > 0 ? n : 0] = 0;
		close(fd);
	}
	clk_allowed = !strncmp(src, "tsc", 3) && !cl_config.clock_monotonic;
	if (clk_allowed)
		clk_pair(&cal_tsc, &cal_ns);
}

/* Writer thread: refit the line to CLOCK_MONOTONIC (every >= 20 ms). */
void cl_clock_calibrate(void)
{
	uint64_t t, n, dn, dt;
	double f, m;

	if (!clk_allowed)
		return;
	clk_pair(&t, &n);
	dn = n - cal_ns;
	dt = t - cal_tsc;
	if (dn < 20000000u || t <= cal_tsc)
		return;
	f = (double)dn / (double)dt;                 /* ns per tick, measured */
	if (!atomic_load(&clk_on)) {
		clk_publish(t, n, (uint64_t)(f * 4294967296.0));
		atomic_store(&clk_on, 1);
	} else {
		uint64_t pred = clk_convert(t, atomic_load(&clk.tsc), atomic_load(&clk.ns),
					    atomic_load(&clk.mult));
		int64_t err = (int64_t)(n - pred);
		if (err > 1000000 || err < -1000000) {
			/* far off (a stop of the VM?): jump forward, or slew back */
			if (err > 0)
				pred = n;
			err = err > 0 ? 0 : -1000000;
		}
		/* reach the monotonic clock again by the next calibration */
		m = f * (1.0 + (double)err / (double)dn);
		if (m > f * 1.001)
			m = f * 1.001;
		if (m < f * 0.999)
			m = f * 0.999;
		clk_publish(t, pred, (uint64_t)(m * 4294967296.0));
	}
	cal_tsc = t;
	cal_ns = n;
}
#else
void cl_clock_init(void)
{
}

void cl_clock_calibrate(void)
{
}
#endif

uint64_t cl_now(void)
{
#ifdef CL_HAVE_TSC
	if (atomic_load_explicit(&clk_on, memory_order_relaxed))
		return clk_now();
#endif
	return mono_ns();
}
