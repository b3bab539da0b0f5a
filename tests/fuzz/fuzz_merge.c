/*
 * fuzz_merge.c - libFuzzer target: `gpuscope merge` (trace_merge) on a
 * hostile report, merged with itself, and the merged report read back.
 *
 * Two input forms, so that both the raw reader and the merger behind valid
 * checksums are reached:
 *  - bytes that start with the report magic are the report itself (seeds
 *    from real reports, tests/fuzz/corpus/merge/);
 *  - anything else is a list of chunks [u32 stream LE][u8 type][u16 length
 *    LE][length bytes], written by the real trace_writer, so stream ids such
 *    as 0xFFFFFFFF (issue 19's reproducer) carry valid checksums.
 * The merged output must load (model_load_report) or the merge must fail
 * cleanly, never crash, leak or leave its temporary behind.
 */
#include "model/model.h"
#include "trace/trace.h"
#include "util/util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char dir[64], out[96];

static void cleanup(void)
{
	if (out[0])
		unlink(out);
	if (dir[0])
		rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	const char *inputs[2];
	struct model m;

	if (fd < 0) {
		const char *tmp = getenv("TMPDIR");
		fd = memfd_create("fuzz_merge", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		snprintf(dir, sizeof(dir), "%s/gsfm.XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
		if (!mkdtemp(dir))
			abort();
		snprintf(out, sizeof(out), "%s/out.gpuscope", dir);
		atexit(cleanup);
		set_error_quiet(1);
	}
	if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return 0;
	if (size >= 8 && !memcmp(data, TRACE_MAGIC, 8)) {
		if (pwrite(fd, data, size, 0) != (ssize_t)size)
			return 0;
	} else {
		struct trace_writer w;
		size_t pos = 0;
		if (trace_writer_fdopen(&w, dup(fd), path, 1) < 0)
			return 0;
		while (size - pos >= 7) {
			uint32_t stream;
			unsigned type = data[pos + 4];
			size_t len = (size_t)data[pos + 5] | (size_t)data[pos + 6] << 8;
			memcpy(&stream, data + pos, 4);
			pos += 7;
			if (len > size - pos)
				len = size - pos;
			if (trace_writer_chunk(&w, type, stream, data + pos, len, type & 1) < 0)
				break;
			pos += len;
		}
		trace_writer_close(&w, 0);
	}
	inputs[0] = inputs[1] = path;
	unlink(out);
	if (trace_merge(out, inputs, 2, 1) == 0) {
		model_init(&m);
		(void)model_load_report(&m, out);
		model_release(&m);
		unlink(out);
	}
	/* whatever happened, no temporary is left beside the output */
	{
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.')
				abort();
		if (d)
			closedir(d);
	}
	return 0;
}
