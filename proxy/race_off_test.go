//go:build !race

package proxy

// raceEnabled: the tests run under the race detector, which makes moving
// large payloads several times slower.
const raceEnabled = false
