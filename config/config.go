package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Error is a problem in a rules file, with the place it was found.
// Line and Column are 1-based; 0 when the problem has no single place
// (e.g. a missing top-level key).
type Error struct {
	File    string
	Line    int
	Column  int
	Message string
}

// Error returns "file:line:column: message", the form editors jump to.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem found in one rules file, in file order.
// errors.As finds the first *Error through Unwrap.
type Errors []*Error

// Error returns one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the individual errors.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// ErrConfig is wrapped by every error Load and Parse return, so callers
// can tell a bad rules file from other failures with errors.Is.
var ErrConfig = errors.New("invalid rules file")

// Is makes errors.Is(err, ErrConfig) hold for a *Error.
func (e *Error) Is(target error) bool { return target == ErrConfig }

// Load reads, decodes and validates a rules file. The error is a
// Errors listing every problem with its line, or the read error.
func Load(path string) (*Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates rules file contents; file names it in
// errors. It accepts ShardingSphere-Proxy 5.x's config-sharding.yaml shape
// plus shardflake's server: section, strictly: unknown keys are errors.
func Parse(data []byte, file string) (*Rules, error) {
	return parseRules(data, file)
}
