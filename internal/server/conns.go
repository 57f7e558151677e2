package server

import (
	"errors"
	"fmt"
)

// -max-connections auto: the file descriptor limit less what other uses
// keep (an eighth, at least 64: the store's connections, the log, the keys
// file's watch, connections being closed), and at most maxAutoConnections,
// which bounds what slow clients cost in memory: each can make the server
// hold about 80 KiB (the 64 KiB header cap and buffers).
const (
	maxAutoConnections  = 1024
	autoConnectionsHelp = "the file descriptor limit less an eighth (at least 64), at most 1024"
)

// usableDescriptors is the number of connections a descriptor limit of
// nofile leaves room for.
func usableDescriptors(nofile int) int {
	return nofile - max(nofile/8, 64)
}

// connectionLimit reads -max-connections: auto, or a positive integer within
// the room a descriptor limit of nofile leaves (0: unknown, no check).
func connectionLimit(value string, nofile int) (int, error) {
	usable := usableDescriptors(nofile)
	if nofile > 0 && usable < 1 {
		return 0, fmt.Errorf("the process may open only %d file descriptors (ulimit -n); raise it", nofile)
	}
	if value == "auto" {
		if nofile == 0 {
			return maxAutoConnections, nil
		}
		return min(maxAutoConnections, usable), nil
	}
	n, ok := positiveInt(value)
	if !ok {
		return 0, errors.New("want auto or a positive integer, such as 1024")
	}
	if nofile > 0 && n > usable {
		return 0, fmt.Errorf("want at most %d: the process may open %d file descriptors (ulimit -n), and keeps %d for other uses", usable, nofile, nofile-usable)
	}
	return n, nil
}
