package algorithm

import (
	"fmt"
	"strings"
)

// PropError is a bad or missing algorithm prop; the loader adds the line.
type PropError struct {
	Prop   string // the prop's key; "" for the algorithm as a whole
	Reason string
}

// Error names the prop, when there is one, and the reason.
func (e *PropError) Error() string {
	if e.Prop == "" {
		return e.Reason
	}
	return e.Prop + ": " + e.Reason
}

func propErrorf(prop, format string, args ...any) error {
	return &PropError{Prop: prop, Reason: fmt.Sprintf(format, args...)}
}

// algorithmBase holds what every algorithm keeps: its type and props.
type algorithmBase struct {
	typ   string
	props map[string]string
}

// Type returns the ShardingSphere type name.
func (a *algorithmBase) Type() string { return a.typ }

// Props returns the props as written; the map must not be modified.
func (a *algorithmBase) Props() map[string]string { return a.props }

// checkProps reports a prop the algorithm does not know.
func checkProps(props map[string]string, known ...string) error {
	for k := range props {
		found := false
		for _, kn := range known {
			if k == kn {
				found = true
				break
			}
		}
		if !found {
			return propErrorf(k, "unknown prop (known: %s)", strings.Join(known, ", "))
		}
	}
	return nil
}

func propBool(props map[string]string, key string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(props[key])) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, propErrorf(key, "want true or false, got %q", props[key])
}

// PlacementProp reports whether the prop key can change where an
// algorithm puts a row. allow-range-query-with-inline-sharding cannot:
// it decides only whether a range condition may scan every target.
func PlacementProp(key string) bool { return key != propAllowRange }
