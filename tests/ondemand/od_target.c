/*
 * od_target.c - a long-running program for the on-demand tests: steps of
 * STEP_MS milliseconds, each an NVTX push/pop range "ProfilerStep#N" with
 * an inner range "work" and a nanosleep (an OS-runtime call), for SECONDS
 * seconds; a mark "tick" with the milliseconds since the start as payload
 * every step.  With SLOW (a step number), that step takes SLOW_FACTOR
 * times as long (the step_time trigger's test).  With OD_LOCK=1 in the
 * environment, "work" also takes a mutex that a second thread holds 3 ms
 * out of every 4 (a contended lock, an OS-runtime wait of up to 3 ms).
 *
 *   od_target SECONDS STEP_MS [SLOW]
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOW_FACTOR 10

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *holder(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		sleep_ms(3);
		pthread_mutex_unlock(&lock);
		sleep_ms(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs, t0 = now_ms();
	long step_ms, slow = -1;
	char name[64];
	const char *ol = getenv("OD_LOCK");
	int locking = ol && *ol == '1';
	pthread_t th;

	if (argc < 3)
		return 2;
	if (locking && pthread_create(&th, NULL, holder, NULL) != 0)
		return 1;
	secs = atof(argv[1]);
	step_ms = atol(argv[2]);
	if (argc > 3)
		slow = atol(argv[3]);
	for (long i = 0; now_ms() - t0 < secs * 1e3; i++) {
		long ms = i == slow ? step_ms * SLOW_FACTOR : step_ms;
		nvtxEventAttributes_t a = { 0 };
		snprintf(name, sizeof(name), "ProfilerStep#%ld", i);
		nvtxRangePushA(name);
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "tick";
		a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
		a.payload.ullValue = (unsigned long long)(now_ms() - t0);
		nvtxMarkEx(&a);
		nvtxRangePushA("work");
		sleep_ms(ms);
		if (locking) {
			pthread_mutex_lock(&lock);
			pthread_mutex_unlock(&lock);
		}
		nvtxRangePop();
		nvtxRangePop();
	}
	return 0;
}
