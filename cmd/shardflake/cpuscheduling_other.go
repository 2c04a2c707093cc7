//go:build !linux

package main

import "github.com/shardflake/shardflake/config"

// setCPUScheduling does nothing: server.cpuScheduling is Linux's.
func setCPUScheduling(config.CPUScheduling) error { return nil }
