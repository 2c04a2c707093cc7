package algorithm

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// intervalAlgorithm is INTERVAL: time windows of datetime-interval-amount
// datetime-interval-units from datetime-lower up to datetime-upper; a
// window's target is the one whose name ends with the window start
// formatted by sharding-suffix-pattern (ShardingSphere matches by suffix
// too). Times have no zone: they are compared as written.
type intervalAlgorithm struct {
	algorithmBase
	pattern string // Java pattern of values, e.g. yyyy-MM-dd HH:mm:ss
	layout  string // the same as a Go layout
	starts  []time.Time
	end     time.Time // end of the last window
	suffix  []string  // per window
}

const (
	propDatetimePattern = "datetime-pattern"
	propDatetimeLower   = "datetime-lower"
	propDatetimeUpper   = "datetime-upper"
	propSuffixPattern   = "sharding-suffix-pattern"
	propIntervalAmount  = "datetime-interval-amount"
	propIntervalUnit    = "datetime-interval-unit"
	propShardingSeconds = "sharding-seconds"
)

func newIntervalAlgorithm(_ string, props map[string]string) (*intervalAlgorithm, error) {
	if err := checkProps(props, propDatetimePattern, propDatetimeLower, propDatetimeUpper,
		propSuffixPattern, propIntervalAmount, propIntervalUnit); err != nil {
		return nil, err
	}
	a := &intervalAlgorithm{algorithmBase: algorithmBase{typ: AlgInterval, props: props}}
	a.pattern = props[propDatetimePattern]
	if a.pattern == "" {
		return nil, propErrorf(propDatetimePattern, "required, e.g. yyyy-MM-dd HH:mm:ss")
	}
	var err error
	if a.layout, err = javaLayout(a.pattern); err != nil {
		return nil, propErrorf(propDatetimePattern, "%v", err)
	}
	lower, err := a.parseProp(props, propDatetimeLower)
	if err != nil {
		return nil, err
	}
	if props[propDatetimeUpper] == "" {
		return nil, propErrorf(propDatetimeUpper, "required: shardflake's router has no clock to default it to now")
	}
	upper, err := a.parseProp(props, propDatetimeUpper)
	if err != nil {
		return nil, err
	}
	if upper.Before(lower) {
		return nil, propErrorf(propDatetimeUpper, "before %s", propDatetimeLower)
	}
	if props[propSuffixPattern] == "" {
		return nil, propErrorf(propSuffixPattern, "required, e.g. yyyyMM")
	}
	suffixLayout, err := javaLayout(props[propSuffixPattern])
	if err != nil {
		return nil, propErrorf(propSuffixPattern, "%v", err)
	}
	amount, err := propInt(props, propIntervalAmount, 1)
	if err != nil {
		return nil, err
	}
	if amount <= 0 {
		return nil, propErrorf(propIntervalAmount, "must be positive")
	}
	step, err := intervalStep(props[propIntervalUnit], int(amount))
	if err != nil {
		return nil, err
	}
	for t := lower; !t.After(upper); t = step(t) {
		if len(a.starts) >= maxPartitions {
			return nil, propErrorf(propIntervalUnit, "more than %d windows between %s and %s", maxPartitions, propDatetimeLower, propDatetimeUpper)
		}
		a.starts = append(a.starts, t)
		a.suffix = append(a.suffix, t.Format(suffixLayout))
	}
	a.end = step(a.starts[len(a.starts)-1])
	return a, nil
}

func (a *intervalAlgorithm) parseProp(props map[string]string, key string) (time.Time, error) {
	s := props[key]
	if s == "" {
		return time.Time{}, propErrorf(key, "required")
	}
	t, err := time.Parse(a.layout, s)
	if err != nil {
		return time.Time{}, propErrorf(key, "%q does not match %s %q", s, propDatetimePattern, a.pattern)
	}
	return t, nil
}

// intervalStep returns the function that moves a window start on by
// amount units; unit is a Java ChronoUnit name, DAYS by default.
func intervalStep(unit string, amount int) (func(time.Time) time.Time, error) {
	d := time.Duration(amount)
	switch strings.ToUpper(strings.TrimSpace(unit)) {
	case "MILLIS":
		return func(t time.Time) time.Time { return t.Add(d * time.Millisecond) }, nil
	case "SECONDS":
		return func(t time.Time) time.Time { return t.Add(d * time.Second) }, nil
	case "MINUTES":
		return func(t time.Time) time.Time { return t.Add(d * time.Minute) }, nil
	case "HOURS":
		return func(t time.Time) time.Time { return t.Add(d * time.Hour) }, nil
	case "HALF_DAYS":
		return func(t time.Time) time.Time { return t.Add(d * 12 * time.Hour) }, nil
	case "", "DAYS":
		return func(t time.Time) time.Time { return t.AddDate(0, 0, amount) }, nil
	case "WEEKS":
		return func(t time.Time) time.Time { return t.AddDate(0, 0, 7*amount) }, nil
	case "MONTHS":
		return func(t time.Time) time.Time { return t.AddDate(0, amount, 0) }, nil
	case "YEARS":
		return func(t time.Time) time.Time { return t.AddDate(amount, 0, 0) }, nil
	case "DECADES":
		return func(t time.Time) time.Time { return t.AddDate(10*amount, 0, 0) }, nil
	}
	return nil, propErrorf(propIntervalUnit, "%q is not a supported unit (MILLIS, SECONDS, MINUTES, HOURS, HALF_DAYS, DAYS, WEEKS, MONTHS, YEARS, DECADES)", unit)
}

// parseValue reads a sharding value as a time with datetime-pattern.
// Like ShardingSphere, a longer text is cut to the pattern's length (so
// fractional seconds are ignored) and a shorter one is read with the same
// length of the pattern (so '2024-03-05' works with yyyy-MM-dd HH:mm:ss).
func (a *intervalAlgorithm) parseValue(v Value) (time.Time, error) {
	return parseTimeValue(v, a.pattern, a.layout)
}

func parseTimeValue(v Value, pattern, layout string) (time.Time, error) {
	var s string
	switch x := v.(type) {
	case time.Time:
		return time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC), nil
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return time.Time{}, fmt.Errorf("a date-time string with pattern %q is needed", pattern)
	}
	if len(s) > len(pattern) {
		s = s[:len(pattern)]
	} else if len(s) < len(pattern) {
		l, err := javaLayout(pattern[:len(s)])
		if err != nil {
			return time.Time{}, fmt.Errorf("does not match pattern %q", pattern)
		}
		layout = l
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("does not match pattern %q", pattern)
	}
	return t, nil
}

// window returns the index of the window holding t, or -1.
func (a *intervalAlgorithm) window(t time.Time) int {
	if t.Before(a.starts[0]) || !t.Before(a.end) {
		return -1
	}
	return sort.Search(len(a.starts), func(i int) bool { return a.starts[i].After(t) }) - 1
}

func (a *intervalAlgorithm) values(c *routeCtx, values []Value) error {
	for _, v := range values {
		if v == nil {
			continue
		}
		t, err := a.parseValue(v)
		if err != nil {
			return c.routeError(v, err.Error())
		}
		if w := a.window(t); w >= 0 {
			c.addEndsWith(a.suffix[w])
		}
	}
	return nil
}

func (a *intervalAlgorithm) rangeOf(c *routeCtx, r *Range) error {
	first, last := 0, len(a.starts)-1
	if r.Low != nil {
		lo, err := a.parseValue(r.Low)
		if err != nil {
			return c.routeError(r.Low, err.Error())
		}
		// the first window whose end is after lo
		first = sort.Search(len(a.starts), func(i int) bool { return a.windowEnd(i).After(lo) })
	}
	if r.High != nil {
		hi, err := a.parseValue(r.High)
		if err != nil {
			return c.routeError(r.High, err.Error())
		}
		// the last window starting at or before hi (before, when exclusive)
		last = sort.Search(len(a.starts), func(i int) bool {
			if r.HighInclusive {
				return a.starts[i].After(hi)
			}
			return !a.starts[i].Before(hi)
		}) - 1
	}
	for w := first; w <= last; w++ {
		c.addEndsWith(a.suffix[w])
	}
	return nil
}

func (a *intervalAlgorithm) windowEnd(i int) time.Time {
	if i+1 < len(a.starts) {
		return a.starts[i+1]
	}
	return a.end
}

// autoIntervalAlgorithm is AUTO_INTERVAL: partitions of sharding-seconds
// from datetime-lower, numbered as ShardingSphere does (partition 0 up to
// datetime-lower, then ceil(seconds since lower / sharding-seconds), capped
// at the last partition); the number is the target's numeric suffix.
type autoIntervalAlgorithm struct {
	algorithmBase
	lower   time.Time
	seconds int64
	amount  int64
}

const autoIntervalPattern = "yyyy-MM-dd HH:mm:ss"

func newAutoIntervalAlgorithm(_ string, props map[string]string) (*autoIntervalAlgorithm, error) {
	if err := checkProps(props, propDatetimeLower, propDatetimeUpper, propShardingSeconds); err != nil {
		return nil, err
	}
	a := &autoIntervalAlgorithm{algorithmBase: algorithmBase{typ: AlgAutoInterval, props: props}}
	const layout = "2006-01-02 15:04:05"
	lower, err := time.Parse(layout, props[propDatetimeLower])
	if err != nil {
		return nil, propErrorf(propDatetimeLower, "required, as %s", autoIntervalPattern)
	}
	upper, err := time.Parse(layout, props[propDatetimeUpper])
	if err != nil {
		return nil, propErrorf(propDatetimeUpper, "required, as %s", autoIntervalPattern)
	}
	secs, err := propInt(props, propShardingSeconds, 0)
	if err != nil {
		return nil, err
	}
	if secs <= 0 {
		return nil, propErrorf(propShardingSeconds, "required, a positive number of seconds")
	}
	a.lower, a.seconds = lower, secs
	// ShardingSphere divides whole seconds as integers before its ceil.
	a.amount = int64(upper.Sub(lower)/time.Second)/secs + 2
	if a.amount > maxPartitions || a.amount < 2 {
		return nil, propErrorf(propShardingSeconds, "between 2 and %d partitions are supported", maxPartitions)
	}
	return a, nil
}

// AutoTablesAmount is the number of partitions.
func (a *autoIntervalAlgorithm) AutoTablesAmount() int { return int(a.amount) }

func (a *autoIntervalAlgorithm) partition(v Value) (int64, error) {
	t, err := parseTimeValue(v, autoIntervalPattern, "2006-01-02 15:04:05")
	if err != nil {
		return 0, err
	}
	diff := float64(int64(t.Sub(a.lower)/time.Millisecond)/1000) / float64(a.seconds)
	p := int64(math.Ceil(math.RoundToEven(diff*100) / 100))
	return min(max(p, 0), a.amount-1), nil
}

func (a *autoIntervalAlgorithm) values(c *routeCtx, values []Value) error {
	for _, v := range values {
		if v == nil {
			continue
		}
		p, err := a.partition(v)
		if err != nil {
			return c.routeError(v, err.Error())
		}
		c.addSuffix(p, 0)
	}
	return nil
}

func (a *autoIntervalAlgorithm) rangeOf(c *routeCtx, r *Range) error {
	first, last := int64(0), a.amount-1
	var err error
	if r.Low != nil {
		if first, err = a.partition(r.Low); err != nil {
			return c.routeError(r.Low, err.Error())
		}
	}
	if r.High != nil {
		if last, err = a.partition(r.High); err != nil {
			return c.routeError(r.High, err.Error())
		}
	}
	for p := first; p <= last; p++ {
		c.addSuffix(p, 0)
	}
	return nil
}

// javaLayout converts a java.time DateTimeFormatter pattern to a Go time
// layout. It supports the letters date-time sharding uses (y u M d H h m s
// S a) and quoted literals; anything else is an error.
func javaLayout(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		j := i
		for j < len(p) && p[j] == c {
			j++
		}
		n := j - i
		switch c {
		case 'y', 'u':
			if n == 2 {
				b.WriteString("06")
			} else {
				b.WriteString("2006")
			}
		case 'M':
			b.WriteString([]string{"1", "01", "Jan", "January"}[min(n, 4)-1])
		case 'd':
			b.WriteString([]string{"2", "02"}[min(n, 2)-1])
		case 'H':
			b.WriteString("15")
		case 'h':
			b.WriteString([]string{"3", "03"}[min(n, 2)-1])
		case 'm':
			b.WriteString([]string{"4", "04"}[min(n, 2)-1])
		case 's':
			b.WriteString([]string{"5", "05"}[min(n, 2)-1])
		case 'a':
			b.WriteString("PM")
		case 'S':
			if i == 0 || p[i-1] != '.' && p[i-1] != ',' {
				return "", fmt.Errorf("fraction of second S must follow '.' in %q", p)
			}
			b.WriteString(strings.Repeat("0", n))
		case '\'':
			k := i + 1
			for k < len(p) && p[k] != '\'' {
				k++
			}
			if k >= len(p) {
				return "", fmt.Errorf("unterminated quote in %q", p)
			}
			lit := p[i+1 : k]
			if lit == "" {
				lit = "'"
			}
			if err := checkLiteral(lit, p); err != nil {
				return "", err
			}
			b.WriteString(lit)
			j = k + 1
		default:
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return "", fmt.Errorf("pattern letter %c in %q is not supported", c, p)
			}
			lit := p[i:j]
			if err := checkLiteral(lit, p); err != nil {
				return "", err
			}
			b.WriteString(lit)
		}
		i = j
	}
	return b.String(), nil
}

// checkLiteral rejects literal text Go's time layout would read as a field.
func checkLiteral(lit, p string) error {
	for _, bad := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "Jan", "Mon", "MST", "PM", "pm", "Z0"} {
		if strings.Contains(lit, bad) {
			return fmt.Errorf("literal %q in %q is not supported", lit, p)
		}
	}
	return nil
}

// Kind is standard: INTERVAL reads one column.
func (a *intervalAlgorithm) Kind() StrategyKind { return StrategyStandard }

// Domain is the date-times of the windows: samples at the start, middle
// and end of each.
func (a *intervalAlgorithm) Domain() (Domain, string) {
	return Domain{Kind: DomainTime, Layout: a.layout, lo: a.starts[0], hi: a.end, times: func() []time.Time {
		var out []time.Time
		for i, s := range a.starts {
			end := a.windowEnd(i)
			out = append(out, s, s.Add(end.Sub(s)/2), end.Add(-time.Second))
		}
		return out
	}}, ""
}

// Kind is standard: AUTO_INTERVAL reads one column.
func (a *autoIntervalAlgorithm) Kind() StrategyKind { return StrategyStandard }

// Domain is the date-times of the partitions: partition 0 ends at lower,
// each later one is sharding-seconds wide; samples an hour before lower
// and at the start, middle and end of each.
func (a *autoIntervalAlgorithm) Domain() (Domain, string) {
	step := time.Duration(a.seconds) * time.Second
	return Domain{Kind: DomainTime, Layout: "2006-01-02 15:04:05", lo: a.lower.Add(-step), hi: a.lower.Add(time.Duration(a.amount-1) * step), times: func() []time.Time {
		out := []time.Time{a.lower.Add(-time.Hour)}
		for k := int64(0); k < a.amount; k++ {
			s := a.lower.Add(time.Duration(k) * step)
			out = append(out, s, s.Add(step/2), s.Add(step-time.Second))
		}
		return out
	}}, ""
}

// routeValues and routeRange are the Algorithm methods (by value, see
// routeCtx) over values and rangeOf.
func (a *intervalAlgorithm) routeValues(c routeCtx, values []Value) (routeCtx, error) {
	err := a.values(&c, values)
	return c, err
}

func (a *intervalAlgorithm) routeRange(c routeCtx, r *Range) (routeCtx, error) {
	err := a.rangeOf(&c, r)
	return c, err
}

// routeValues and routeRange are the Algorithm methods (by value, see
// routeCtx) over values and rangeOf.
func (a *autoIntervalAlgorithm) routeValues(c routeCtx, values []Value) (routeCtx, error) {
	err := a.values(&c, values)
	return c, err
}

func (a *autoIntervalAlgorithm) routeRange(c routeCtx, r *Range) (routeCtx, error) {
	err := a.rangeOf(&c, r)
	return c, err
}
