// gpu_fork.cu - a traced process forks after CUDA is up.  One child exits
// with exit() (atexit handlers run), one with _exit(); neither touches CUDA.
// Neither may hang in CUPTI; the parent keeps launching afterwards.
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void parent_kernel(int *p) { if (p) *p += 1; }

int main()
{
	int *d, status = 0;
	CK(cudaMalloc(&d, sizeof(int)));
	for (int i = 0; i < 4; i++)
		parent_kernel<<<1, 1>>>(d);
	CK(cudaDeviceSynchronize());
	for (int c = 0; c < 2; c++) {
		pid_t pid = fork();
		if (pid == 0) {
			volatile double x = 0;
			for (int i = 0; i < 1000000; i++)
				x += i * 0.5;
			usleep(20000);
			if (c == 0)
				exit(0);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "gpu_fork: child %d failed\n", c);
			return 1;
		}
	}
	for (int i = 0; i < 4; i++)
		parent_kernel<<<1, 1>>>(d);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	printf("gpu_fork: ok\n");
	return 0;
}
