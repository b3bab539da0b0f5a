/*
 * cmd_profile.c - `gpuscope profile`.  Not yet written.
 */
#include "commands.h"
#include "../util/util.h"

int cmd_profile(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error("'profile' is not available in this build yet");
	return EXIT_USAGE;
}
