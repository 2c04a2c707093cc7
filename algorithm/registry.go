package algorithm

import "strings"

// The registry: every sharding algorithm type shardflake implements, one
// line each. Adding an algorithm is one file (its type, constructor and
// the Algorithm methods) and one line here.

// Algorithm type names shardflake implements.
const (
	AlgInline        = "INLINE"
	AlgComplexInline = "COMPLEX_INLINE"
	AlgHintInline    = "HINT_INLINE"
	AlgMod           = "MOD"
	AlgHashMod       = "HASH_MOD"
	AlgBoundaryRange = "BOUNDARY_RANGE"
	AlgVolumeRange   = "VOLUME_RANGE"
	AlgInterval      = "INTERVAL"
	AlgAutoInterval  = "AUTO_INTERVAL"
)

// constructor builds an algorithm of one type from its props; a bad prop
// is a *PropError.
type constructor func(typ string, props map[string]string) (Algorithm, error)

// registration is one algorithm type and its constructor.
type registration struct {
	typ string
	new constructor
}

// registry lists the algorithm types in the order error messages name them.
var registry = []registration{
	{AlgInline, register(newInlineAlgorithm)},
	{AlgMod, register(newModAlgorithm)},
	{AlgHashMod, register(newModAlgorithm)},
	{AlgBoundaryRange, register(newBoundaryRangeAlgorithm)},
	{AlgVolumeRange, register(newVolumeRangeAlgorithm)},
	{AlgInterval, register(newIntervalAlgorithm)},
	{AlgAutoInterval, register(newAutoIntervalAlgorithm)},
	{AlgComplexInline, register(newInlineAlgorithm)},
	{AlgHintInline, register(newInlineAlgorithm)},
}

// register turns a constructor of one concrete type into a constructor of
// Algorithm (never a typed nil on error).
func register[A Algorithm](f func(string, map[string]string) (A, error)) constructor {
	return func(typ string, props map[string]string) (Algorithm, error) {
		a, err := f(typ, props)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
}

// New builds a sharding algorithm from its ShardingSphere type name and
// props. An unknown type or a bad prop is a *PropError.
func New(typ string, props map[string]string) (Algorithm, error) {
	for _, r := range registry {
		if r.typ == typ {
			return r.new(typ, props)
		}
	}
	if typ == "CLASS_BASED" {
		return nil, &PropError{Reason: "CLASS_BASED runs Java classes; shardflake cannot load them"}
	}
	return nil, &PropError{Reason: "unknown type; supported: " + strings.Join(TypeNames(), ", ")}
}

// TypeNames returns the algorithm types New accepts, in registry order.
func TypeNames() []string {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.typ
	}
	return names
}
