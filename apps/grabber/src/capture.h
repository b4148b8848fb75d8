/* The capture loop: every device and the stop signals in one mux. */
#ifndef GRABBER_CAPTURE_H
#define GRABBER_CAPTURE_H

#include "options.h"

/* Runs a capture as the options say; returns the exit status (0 done or
 * stopped by SIGINT/SIGTERM, 1 failed). */
int capture_run(const struct grabber_options *options);

#endif
