/*
 * cmd_check.c - `gpuscope check`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_check(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'check' is not available in this build yet");
	return EXIT_USAGE;
}
