/*
 * mk_newer.c - mark a report (written by the real writer) as written by a
 * future gpuscope that this one cannot read: a newer version and minimum
 * reader in its header, the header checksum made again (as tests/trace does).
 * usage: mk_newer REPORT
 */
#include "trace/trace.h"
#include "util/util.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct trace_file_header h;
	int fd, ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: mk_newer REPORT\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || pread(fd, &h, sizeof(h), 0) != sizeof(h)) {
		perror(argv[1]);
		return 1;
	}
	h.version = TRACE_VERSION + 5;
	h.min_reader = TRACE_VERSION + 3;
	h.header_crc = crc32c(0, &h, offsetof(struct trace_file_header, header_crc));
	if (pwrite(fd, &h, sizeof(h), 0) != sizeof(h)) {
		perror(argv[1]);
		ret = 1;
	}
	close(fd);
	return ret;
}
