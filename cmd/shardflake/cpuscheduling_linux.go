package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/shardflake/shardflake/config"
)

const (
	schedBatch       = 3          // SCHED_BATCH, sched(7)
	schedResetOnFork = 0x40000000 // a flag sched_getscheduler may add to the policy
)

// setCPUScheduling gives every thread of the process the policy s asks
// for (server.cpuScheduling). sched_setscheduler changes one thread, and
// a thread started later takes its creator's policy, so it passes over
// /proc/self/task until a pass finds no thread left to change: a thread
// started during a pass by a thread not yet changed is there for the
// next one, and every thread started after the last pass is started by
// a changed one.
func setCPUScheduling(s config.CPUScheduling) error {
	if s != config.SchedulingBatch {
		return nil
	}
	for range 100 {
		changed, err := batchThreads()
		if err != nil || !changed {
			return err
		}
	}
	return errors.New("threads kept starting with another policy")
}

// batchThreads makes SCHED_BATCH every thread that is not, and reports
// whether it found one.
func batchThreads() (changed bool, err error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false, err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		policy, _, errno := syscall.Syscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
		if errno == syscall.ESRCH {
			continue // the thread has ended
		}
		if errno != 0 {
			return changed, fmt.Errorf("sched_getscheduler(%d): %w", tid, errno)
		}
		if policy&^schedResetOnFork == schedBatch {
			continue
		}
		var priority int32 // the only value SCHED_BATCH takes
		_, _, errno = syscall.Syscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedBatch, uintptr(unsafe.Pointer(&priority)))
		if errno == syscall.ESRCH {
			continue
		}
		if errno != 0 {
			return changed, fmt.Errorf("sched_setscheduler(%d, SCHED_BATCH): %w", tid, errno)
		}
		changed = true
	}
	return changed, nil
}
