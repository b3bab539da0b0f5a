/*
 * fuzz_entries.c - libFuzzer target: arbitrary event entries, written into
 * a well-formed report by the real writer, through the model loader.
 *
 * fuzz_report sees raw file bytes, and nearly every mutation of those breaks
 * a CRC-32C or the zstd frame, so the entry parser and the model behind the
 * checksums are rarely reached.  Here the input is a list of chunks, each
 * [u8 stream][u16 length, little-endian][length bytes of entries] (length 0
 * writes a stream-end chunk); the writer adds the headers and checksums.
 */
#include "model/model.h"
#include "trace/trace.h"
#include "util/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct trace_writer w;
	struct model m;
	size_t pos = 0;

	if (fd < 0) {
		fd = memfd_create("fuzz_entries", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		set_error_quiet(1);
	}
	if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return 0;
	if (trace_writer_fdopen(&w, dup(fd), path, 1) < 0)
		return 0;
	while (size - pos >= 3) {
		uint32_t stream = data[pos];
		size_t len = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
		pos += 3;
		if (len > size - pos)
			len = size - pos;
		if (!len)
			trace_writer_chunk(&w, TRACE_CHUNK_STREAM_END, stream, NULL, 0, 0);
		else
			trace_writer_chunk(&w, TRACE_CHUNK_EVENTS, stream, data + pos, len, 0);
		pos += len;
	}
	trace_writer_close(&w, 0);
	model_init(&m);
	if (model_load_report(&m, path) == 0) {
		/* touch what consumers touch */
		for (size_t i = 0; i < m.kernels.n; i++)
			(void)model_str(&m, m.kernels.v[i].name_id);
		for (size_t i = 0; i < m.threads.n; i++)
			(void)model_thread_name(&m, m.threads.v[i].pid, m.threads.v[i].tid);
		for (size_t i = 0; i < m.procs.n; i++)
			(void)model_str(&m, m.procs.v[i].cmdline_id);
		if (m.t_max > m.t_min)
			model_clip(&m, m.t_min + (m.t_max - m.t_min) / 4, m.t_max - (m.t_max - m.t_min) / 4);
	}
	model_release(&m);
	return 0;
}
