/*
 * fuzz_kineto.c - libFuzzer target: any bytes through the Kineto JSON
 * importer (the streaming yajl parser and the event mapping) must load or
 * fail cleanly with an error, never crash, leak or read out of bounds.
 */
#include "import/import_int.h"
#include "util/util.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct model m;

	if (!quiet) {
		set_error_quiet(1);
		quiet = 1;
	}
	model_init(&m);
	if (kineto_load_buffer(&m, "fuzz.json", data, size) == 0) {
		/* touch what consumers touch */
		for (size_t i = 0; i < m.kernels.n; i++)
			(void)model_str(&m, m.kernels.v[i].name_id);
		for (size_t i = 0; i < m.nvtx.n; i++)
			(void)model_str(&m, m.nvtx.v[i].name_id);
	}
	model_release(&m);
	return 0;
}
