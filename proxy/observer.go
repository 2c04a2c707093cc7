package proxy

import (
	"context"
	"errors"
	"time"

	"github.com/shardflake/shardflake/proxy/metrics"
)

// The proxy's names for what it reports to an Observer (package metrics
// defines them, beside the Prometheus Observer).

// Observer is told what the proxy does (metrics.Observer).
type Observer = metrics.Observer

// StatementEvent describes one routed statement (metrics.StatementEvent).
type StatementEvent = metrics.StatementEvent

// RouteEvent describes one route's run (metrics.RouteEvent).
type RouteEvent = metrics.RouteEvent

// routeEvent is the event of a route that ran on ds for d and ended with
// err, with what the proxy's errors say about it filled in.
func routeEvent(ds string, d time.Duration, err error) RouteEvent {
	ev := RouteEvent{DataSource: ds, Duration: d, Err: err}
	if err != nil {
		var dse *DataSourceError
		ev.Unreached = errors.As(err, &dse) && !dse.Lost
		ev.Cancelled = errors.Is(err, ErrQueryInterrupted) || errors.Is(err, ErrStatementTimeout) || errors.Is(err, context.Canceled)
	}
	return ev
}

// nopObserver is the Observer when none is configured.
type nopObserver struct{}

func (nopObserver) ClientConnected()         {}
func (nopObserver) ClientDisconnected()      {}
func (nopObserver) Statement(StatementEvent) {}
func (nopObserver) Route(RouteEvent)         {}
func (nopObserver) Error(uint16)             {}
func (nopObserver) Panic()                   {}
