/*
 * demo.c - a small program to profile: `gpuscope profile -o demo -- build/examples/demo`.
 *
 * The main thread starts two named threads and waits for them:
 *  - "loader" reads this program's own binary in 64 KiB pieces and sleeps
 *    2 ms between passes (file reads and sleeps: OS-runtime calls);
 *  - "worker" runs 20 NVTX "step" ranges, each with a nested "compute"
 *    range, taking a mutex the main thread also holds now and then.
 * It needs no GPU; NVTX comes from the CUDA toolkit's header-only nvtx3 when
 * present (without it the ranges are simply not there).  Runs in ~0.2 s.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#else
#define nvtxRangePushA(s) ((void)(s), 0)
#define nvtxRangePop() 0
#define nvtxMarkA(s) ((void)(s))
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *self_path;
static volatile unsigned long checksum;

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		checksum++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *loader(void *arg)
{
	static char buf[64 << 10];

	(void)arg;
	pthread_setname_np(pthread_self(), "loader");
	for (int pass = 0; pass < 5; pass++) {
		int fd = open(self_path, O_RDONLY);
		ssize_t n;
		if (fd < 0)
			return NULL;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			checksum += (unsigned char)buf[0];
		close(fd);
		sleep_ms(2);
	}
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker");
	for (int i = 0; i < 20; i++) {
		nvtxRangePushA("step");
		pthread_mutex_lock(&lock);
		nvtxRangePushA("compute");
		spin_us(2000);
		nvtxRangePop();
		pthread_mutex_unlock(&lock);
		sleep_ms(1);
		nvtxRangePop();
	}
	nvtxMarkA("worker done");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;

	(void)argc;
	self_path = argv[0];
	pthread_create(&t1, NULL, loader, NULL);
	pthread_create(&t2, NULL, worker, NULL);
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&lock);
		spin_us(3000);
		pthread_mutex_unlock(&lock);
		sleep_ms(1);
	}
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("demo: done (checksum %lu)\n", checksum % 1000);
	return 0;
}
