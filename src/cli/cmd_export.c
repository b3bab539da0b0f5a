/*
 * cmd_export.c - `gpuscope export`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'export' is not available in this build yet");
	return EXIT_USAGE;
}
