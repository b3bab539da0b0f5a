/*
 * cmd_analyze.c - `gpuscope analyze`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_analyze(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'analyze' is not available in this build yet");
	return EXIT_USAGE;
}
