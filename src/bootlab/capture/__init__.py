"""Console capture: every byte from a serial port, a pty, a TCP console or a child
process, stamped with the host's monotonic clock when it arrives, written as it arrives."""
