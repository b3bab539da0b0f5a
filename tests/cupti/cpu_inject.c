/*
 * cpu_inject.c - a CPU-only program that does what the CUDA driver does at
 * cuInit: dlopen(CUDA_INJECTION64_PATH) and call its InitializeInjection().
 * Where no NVIDIA driver exists (CI) the real libcupti cannot start, so the
 * collector must record a "CUDA tracing off" warning and the CPU side.
 * Then it does plain CPU work: sleeps and file reads (OS-runtime records).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	char buf[256];
	void *h;
	int (*init)(void);

	if (!path) {
		fprintf(stderr, "cpu_inject: CUDA_INJECTION64_PATH is not set\n");
		return 2;
	}
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "cpu_inject: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "cpu_inject: no InitializeInjection in '%s'\n", path);
		return 2;
	}
	printf("InitializeInjection returned %d\n", init());
	for (int i = 0; i < 4; i++) {
		int fd = open("/proc/self/stat", O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				perror("read");
			close(fd);
		}
		nanosleep(&ts, NULL);
	}
	printf("cpu_inject: ok\n");
	return 0;
}
