package config

// CPUScheduling is the Linux scheduling policy of the proxy's threads
// (server.cpuScheduling). Elsewhere it has no effect.
type CPUScheduling int

const (
	// SchedulingBatch makes every thread SCHED_BATCH (sched(7)): a proxy
	// thread that a socket wakes does not preempt the task running on
	// its CPU, and on Linux 6.18 the proxy was itself preempted a third
	// less often in the middle of a statement (right after a write that
	// woke its peer); on a point select over loopback its CPU per
	// statement fell by 16-25% (BENCHMARKS.md, "The proxy's socket work
	// against the relay's"). It needs no privilege.
	SchedulingBatch CPUScheduling = iota
	// SchedulingNormal leaves the threads as the process was started
	// (SCHED_OTHER, unless started under chrt).
	SchedulingNormal
)

// String returns the setting's name in the rules file.
func (c CPUScheduling) String() string {
	if c == SchedulingNormal {
		return "normal"
	}
	return "batch"
}
