/*
 * target.c - gs_target, the program the collector's end-to-end tests profile.
 *
 *   gs_target MODE [ARGS]
 *
 * exit N | return N | _exit N   mark "bye", then end that way with status N
 * abort | segv                  200 marks "tick" 1 ms apart, a mark "last", then crash
 * kill SIG                      raise signal SIG (default action)
 * wait FILE                     create FILE, then mark "alive" every 5 ms until killed
 * nvtx T N                      T threads x N push/pop ranges "r"
 * print                         deterministic stdout (printf and write mixed)
 * fork | forkexec | spawn | python
 *                               a child (forked, forked+exec'ed, posix_spawn'ed,
 *                               or python3 running this program) marks "child"
 * mark NAME                     one mark and one range NAME
 * capture                       ranges warmup x2, profile{inner x3} x2, after x2
 * timed                         a mark "t" every 10 ms for 600 ms, payload = ms since start
 * osrt                          nanosleep 40 ms x3 and 100 us x20
 * lowest [closerange]           open and close /dev/null for 300 ms: each time the same, lowest
 *                               free descriptor (prints "lowest N" or "stolen N M"); first
 *                               close every descriptor from 3 up with close_range
 * lock                          a second thread holds a mutex 40 ms while the main
 *                               thread waits for it, x3; then 1000 uncontended lock pairs
 * names                         threads named from inside, from outside and by NVTX
 * nvtx-api                      every NVTX call variant, for the dump test
 * fds [quick]                   close every descriptor >= 3, dup2 /dev/null onto all of them,
 *                               mark "fd" 50 times 2 ms apart (not when quick), close them all
 *                               again, print "left N": how many of 3..1023 are still open
 * clock                         a mark "c" every 1 ms for 400 ms, payload = CLOCK_MONOTONIC ns read just before
 * layout LIB                    where what a program maps after its start lands: prints
 *                               "anon A lib L", a 16 MiB anonymous mapping's and the library
 *                               LIB's (dlopen'ed first) base less libc's, in bytes
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

extern char **environ;
static const char *self;

static pthread_mutex_t lock_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t lock_bar;

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void mark_payload(const char *name, uint64_t v)
{
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = v;
	nvtxMarkEx(&a);
}

/* layout LIB: what lands where after the start, from libc's base (docs/collector.md) */
static int layout(const char *lib)
{
	Dl_info libc;
	struct link_map *lm = NULL;
	void *anon, *h;

	if (!dladdr((void *)printf, &libc) || !lib)
		return 2;
	/*
	 * The library first: the 16 MiB mapping is aligned to 2 MiB by the
	 * kernel, and the room it leaves below libc (random with libc's base)
	 * would decide whether the library still fits there.
	 */
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	anon = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED || !h || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm) {
		fprintf(stderr, "layout: %s\n", h ? "no link map" : dlerror());
		return 1;
	}
	printf("anon %lld lib %lld\n", (long long)((char *)anon - (char *)libc.dli_fbase),
	       (long long)((char *)lm->l_addr - (char *)libc.dli_fbase));
	return 0;
}

static void ticks_then(void)
{
	for (int i = 0; i < 200; i++) {
		mark_payload("tick", (uint64_t)i);
		sleep_ns(1000000);
	}
	nvtxMarkA("last");
}

/* holds the mutex 40 ms, the barrier telling the main thread it is held */
static void *lock_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_m);
	pthread_barrier_wait(&lock_bar);
	sleep_ns(40000000);
	pthread_mutex_unlock(&lock_m);
	return NULL;
}

static int nvtx_n;

static void *nvtx_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < nvtx_n; i++) {
		nvtxRangePushA("r");
		nvtxRangePop();
	}
	return NULL;
}

static int child_mark(void)
{
	nvtxMarkA("child");
	nvtxRangePushA("child");
	sleep_ns(2000000);
	nvtxRangePop();
	return 0;
}

static int wait_child(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static void range(const char *name, long ns)
{
	nvtxRangePushA(name);
	sleep_ns(ns);
	nvtxRangePop();
}

static pthread_t outside_th;
static pthread_barrier_t names_bar;

static void *named_self(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "self-named");
	nvtxMarkA("in self-named");
	pthread_barrier_wait(&names_bar);
	return NULL;
}

static void *named_outside(void *arg)
{
	(void)arg;
	nvtxMarkA("in outside-named");
	pthread_barrier_wait(&names_bar);
	return NULL;
}

static void *named_nvtx(void *arg)
{
	(void)arg;
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "nvtx-named");
	nvtxMarkA("in nvtx-named");
	pthread_barrier_wait(&names_bar);
	return NULL;
}

static nvtxRangeId_t cross_id;
static nvtxDomainHandle_t cross_dom;

static void *end_elsewhere(void *arg)
{
	(void)arg;
	nvtxDomainRangeEnd(cross_dom, cross_id);
	return NULL;
}

static int nvtx_api(void)
{
	nvtxEventAttributes_t a = { 0 };
	nvtxDomainHandle_t dom = nvtxDomainCreateA("gsdomain");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered");
	pthread_t th;

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;

	nvtxNameCategoryA(7, "seven");
	nvtxDomainNameCategoryA(dom, 3, "three");
	nvtxRangePushA("ascii");
	nvtxRangePushW(L"wide \u00e9t\u00e9");
	nvtxRangePop();
	nvtxRangePop();

	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "colored";
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff00ff00u;
	a.category = 7;
	a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
	a.payload.iValue = -5;
	nvtxRangePushEx(&a);
	nvtxRangePop();

	a.colorType = NVTX_COLOR_UNKNOWN;
	a.color = 0;
	a.category = 3;
	a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
	a.payload.dValue = 2.5;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxDomainRangePushEx(dom, &a);
	nvtxDomainRangePop(dom);
	nvtxDomainMarkEx(dom, &a);

	a.category = 0;
	a.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
	a.payload.fValue = 0.5f;
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = L"wide mark";
	nvtxMarkEx(&a);
	nvtxMarkW(L"plain wide");

	/* a start/end range in a domain, ended on another thread */
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = 42;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "domain startend";
	cross_dom = dom;
	cross_id = nvtxDomainRangeStartEx(dom, &a);
	pthread_create(&th, NULL, end_elsewhere, NULL);
	pthread_join(th, NULL);
	nvtxRangeEnd(nvtxRangeStartW(L"wide startend"));
	nvtxRangePop(); /* unbalanced: counted as a drop */
	nvtxDomainDestroy(dom);
	return 0;
}

static void sigpipe_again(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

static void *churn_thread(void *arg)
{
	nvtxRangePushA("short");
	nvtxRangePop();
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;

	self = argv[0];
	if (!strcmp(mode, "exit")) {
		nvtxMarkA("bye");
		exit(n);
	} else if (!strcmp(mode, "return")) {
		nvtxMarkA("bye");
		return n;
	} else if (!strcmp(mode, "_exit")) {
		nvtxMarkA("bye");
		_exit(n);
	} else if (!strcmp(mode, "abort")) {
		ticks_then();
		abort();
	} else if (!strcmp(mode, "segv")) {
		ticks_then();
		{
			/* a page with no access: a SIGSEGV everywhere (page 0 may be mapped) */
			int *volatile p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			*p = 1;
		}
		return 99;
	} else if (!strcmp(mode, "kill")) {
		nvtxMarkA("bye");
		raise(n);
		return 99;
	} else if (!strcmp(mode, "wait")) {
		int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
		close(fd);
		for (;;) {
			nvtxMarkA("alive");
			sleep_ns(5000000);
		}
	} else if (!strcmp(mode, "nvtx")) {
		int nt = n;
		pthread_t *th = calloc((size_t)nt, sizeof(*th));
		nvtx_n = argc > 3 ? atoi(argv[3]) : 0;
		for (int i = 0; i < nt; i++)
			pthread_create(&th[i], NULL, nvtx_thread, NULL);
		for (int i = 0; i < nt; i++)
			pthread_join(th[i], NULL);
		free(th);
		return 0;
	} else if (!strcmp(mode, "print")) {
		for (int i = 0; i < 500; i++) {
			printf("line %d %s\n", i, i % 7 ? "abc" : "defgh");
			if (i % 50 == 0) {
				char b[32];
				int k = snprintf(b, sizeof(b), "raw %d\n", i);
				fflush(stdout);
				if (write(1, b, (size_t)k) != k)
					return 1;
			}
		}
		fprintf(stderr, "to stderr\n");
		return 0;
	} else if (!strcmp(mode, "fork")) {
		nvtxDomainHandle_t d = nvtxDomainCreateA("forkdomain");
		nvtxStringHandle_t reg = nvtxDomainRegisterStringA(d, "registered before fork");
		pid_t pid;
		nvtxMarkA("before fork");
		pid = fork();
		if (pid == 0) {
			nvtxEventAttributes_t a = { 0 };
			a.version = NVTX_VERSION;
			a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
			a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
			a.message.registered = reg;
			nvtxDomainMarkEx(d, &a);
			child_mark();
			exit(0);
		}
		nvtxMarkA("parent");
		return wait_child(pid);
	} else if (!strcmp(mode, "forkexec")) {
		pid_t pid = fork();
		if (pid == 0) {
			execl(self, self, "mark", "exec-child", (char *)NULL);
			_exit(127);
		}
		nvtxMarkA("parent");
		return wait_child(pid);
	} else if (!strcmp(mode, "spawn")) {
		char *args[] = { (char *)self, "mark", "spawned", NULL };
		pid_t pid;
		if (posix_spawn(&pid, self, NULL, NULL, args, environ))
			return 1;
		nvtxMarkA("parent");
		return wait_child(pid);
	} else if (!strcmp(mode, "python")) {
		pid_t pid = fork();
		if (pid == 0) {
			execlp("python3", "python3", "-c",
			       "import subprocess, sys; sys.exit(subprocess.run([sys.argv[1], 'mark', 'from-python']).returncode)",
			       self, (char *)NULL);
			_exit(127);
		}
		nvtxMarkA("parent");
		return wait_child(pid);
	} else if (!strcmp(mode, "mark")) {
		nvtxMarkA(argv[2]);
		range(argv[2], 1000000);
		return 0;
	} else if (!strcmp(mode, "capture")) {
		range("warmup", 1000000);
		range("warmup", 1000000);
		for (int k = 0; k < 2; k++) {
			nvtxRangePushA("profile");
			for (int i = 0; i < 3; i++)
				range("inner", 1000000);
			nvtxRangePop();
			range("between", 1000000);
		}
		range("after", 1000000);
		return 0;
	} else if (!strcmp(mode, "timed")) {
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (ms_since(&t0) < 600) {
			mark_payload("t", (uint64_t)ms_since(&t0));
			sleep_ns(10000000);
		}
		return 0;
	} else if (!strcmp(mode, "osrt")) {
		for (int i = 0; i < 3; i++)
			sleep_ns(40000000);
		for (int i = 0; i < 20; i++)
			sleep_ns(100000);
		return 0;
	} else if (!strcmp(mode, "layout")) {
		return layout(argc > 2 ? argv[2] : NULL);
	} else if (!strcmp(mode, "lowest")) {
		struct timespec t0;
		int first;
		if (argc > 2 && !strcmp(argv[2], "closerange") && close_range(3, ~0U, 0) < 0)
			return 1;
		first = open("/dev/null", O_RDONLY);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		close(first);
		while (ms_since(&t0) < 300) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd != first) {
				printf("stolen %d %d\n", first, fd);
				return 5;
			}
			close(fd);
		}
		printf("lowest %d\n", first);
		return 0;
	} else if (!strcmp(mode, "lock")) {
		pthread_barrier_init(&lock_bar, NULL, 2);
		for (int i = 0; i < 3; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, lock_holder, NULL))
				return 1;
			pthread_barrier_wait(&lock_bar);
			pthread_mutex_lock(&lock_m);
			pthread_mutex_unlock(&lock_m);
			pthread_join(t, NULL);
		}
		for (int i = 0; i < 1000; i++) {
			pthread_mutex_lock(&lock_m);
			pthread_mutex_unlock(&lock_m);
		}
		return 0;
	} else if (!strcmp(mode, "names")) {
		pthread_t a, c;
		pthread_barrier_init(&names_bar, NULL, 4);
		pthread_create(&a, NULL, named_self, NULL);
		pthread_create(&outside_th, NULL, named_outside, NULL);
		pthread_setname_np(outside_th, "outside-named");
		pthread_create(&c, NULL, named_nvtx, NULL);
		sleep_ns(50000000); /* let the CPU sampler see the threads */
		pthread_barrier_wait(&names_bar);
		pthread_join(a, NULL);
		pthread_join(outside_th, NULL);
		pthread_join(c, NULL);
		return 0;
	} else if (!strcmp(mode, "fds")) {
		int null;
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		null = open("/dev/null", O_WRONLY);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != null)
				dup2(null, fd);
		for (int i = 0; argc < 3 && i < 50; i++) {
			nvtxMarkA("fd");
			sleep_ns(2000000);
		}
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		{
			/* what the program closed is closed, but for the part file */
			int left = 0;
			for (int fd = 3; fd < 1024; fd++)
				left += fcntl(fd, F_GETFD) >= 0;
			printf("left %d\n", left);
		}
		return 0;
	} else if (!strcmp(mode, "clock")) {
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (ms_since(&t0) < 400) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			mark_payload("c", (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec);
			sleep_ns(1000000);
		}
		return 0;
	} else if (!strcmp(mode, "nvtx-api")) {
		return nvtx_api();
	} else if (!strcmp(mode, "sigquery")) {
		/* what the program sees of the signal actions it did not set */
		static const int sigs[] = { SIGSEGV, SIGABRT, SIGINT, SIGTERM, SIGHUP, SIGPIPE };
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			struct sigaction sa;
			void (*prev)(int) = signal(sigs[i], SIG_IGN);
			signal(sigs[i], prev);
			sigaction(sigs[i], NULL, &sa);
			printf("%d %s %s\n", sigs[i],
			       !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL ? "dfl" : "other",
			       prev == SIG_DFL ? "dfl" : "other");
		}
		return 0;
	} else if (!strcmp(mode, "sigpipe")) {
		/* like sort(1): catch SIGPIPE, restore the default, raise it again */
		int p[2];
		signal(SIGPIPE, sigpipe_again);
		if (pipe(p) < 0)
			return 1;
		close(p[0]);
		for (int i = 0; i < 20; i++)
			nvtxMarkA("before");
		if (write(p[1], "x", 1) < 0)
			return 3;
		return 0;
	} else if (!strcmp(mode, "closerange")) {
		int p[2];
		if (pipe(p) < 0)
			return 1;
		nvtxMarkA("fd");
		if (close_range(3, ~0U, 0) < 0)
			return 1;
		if (fcntl(p[0], F_GETFD) >= 0 || fcntl(p[1], F_GETFD) >= 0)
			return 4; /* the program's own descriptors must be closed */
		closefrom(3);
		for (int i = 0; i < 49; i++) {
			nvtxMarkA("fd");
			sleep_ns(2000000);
		}
		return 0;
	} else if (!strcmp(mode, "lowfd")) {
		/* the low descriptors are the program's alone, as without the collector */
		char path[64], link[256];
		sleep_ns(100000000); /* the CPU sampler has seen this thread */
		for (int fd = 0; fd < 700; fd++) {
			ssize_t k;
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			k = readlink(path, link, sizeof(link) - 1);
			if (k > 0) {
				link[k] = 0;
				printf("%d %s\n", fd, strncmp(link, "/proc/", 6) ? "" : link + 6 + strcspn(link + 6, "/"));
			}
		}
		return 0;
	} else if (!strcmp(mode, "churn")) {
		/* N short-lived threads, created and joined one after another;
		 * prints the peak resident size (VmHWM, kB) */
		char st[4096];
		int fd;
		ssize_t k;
		for (int i = 0; i < n; i++) {
			pthread_t th;
			if (pthread_create(&th, NULL, churn_thread, NULL))
				return 1;
			pthread_join(th, NULL);
		}
		fd = open("/proc/self/status", O_RDONLY);
		k = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
		st[k > 0 ? k : 0] = 0;
		{
			const char *h = strstr(st, "VmHWM:");
			printf("%ld\n", h ? strtol(h + 6, NULL, 10) : -1L);
		}
		return 0;
	} else if (!strcmp(mode, "orphan")) {
		/* the program ends while its child still runs (a helper process) */
		if (fork() == 0) {
			sleep_ns(300000000);
			for (int i = 0; i < 10; i++)
				nvtxMarkA("orphan");
			exit(0);
		}
		nvtxMarkA("parent");
		return 0;
	}
	fprintf(stderr, "gs_target: unknown mode '%s'\n", mode);
	return 2;
}
