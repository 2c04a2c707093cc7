package idgen

import (
	"slices"
	"strings"
	"time"
)

// Props of the SEGMENT and TICKET types that say where their state lives.
const (
	// PropURL is the data source: jdbc:mysql://host:port/db or
	// mysql://user:pass@host:port/db. TICKET's PropURLs lists several.
	PropURL      = "url"
	PropURLs     = "urls"
	PropUsername = "username"
	PropPassword = "password"
	// PropFetchTimeout bounds one round trip to the data source.
	PropFetchTimeout = "fetch-timeout-milliseconds"
	// PropRetryAfter is how long a data source that failed is left alone
	// (calls fail at once with its error) before it is tried again.
	PropRetryAfter = "retry-after-milliseconds"
)

// Defaults of the props shared by SEGMENT and TICKET.
const (
	DefaultFetchTimeout = 2 * time.Second
	DefaultRetryAfter   = time.Second
)

// StoreConfig is where a SEGMENT or TICKET generator keeps its state.
type StoreConfig struct {
	// URLs are the data sources as written (one for SEGMENT).
	URLs               []string
	Username, Password string
	FetchTimeout       time.Duration
	RetryAfter         time.Duration
}

// readProps checks props against known and returns a reader for them;
// errors carry typ.
func readProps(typ string, props map[string]string, known []string) (*propReader, error) {
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(known, name) {
			return nil, &PropError{Type: typ, Prop: name, Reason: "unknown prop; known: " + strings.Join(known, ", ")}
		}
	}
	return &propReader{props: props}, nil
}

// typed sets the generator type of a prop error.
func typed(typ string, err error) error {
	if pe, ok := err.(*PropError); ok && pe.Type == "" {
		pe.Type = typ
	}
	return err
}

// store reads the data-source props into c; urlProp is PropURL or
// PropURLs.
func (p *propReader) store(typ, urlProp string) StoreConfig {
	c := StoreConfig{FetchTimeout: DefaultFetchTimeout, RetryAfter: DefaultRetryAfter}
	for _, u := range strings.Split(p.props[urlProp], ",") {
		if u = strings.TrimSpace(u); u != "" {
			c.URLs = append(c.URLs, u)
		}
	}
	if len(c.URLs) == 0 {
		p.fail(urlProp, "", "required: the data source, e.g. jdbc:mysql://127.0.0.1:3306/ids")
	}
	if urlProp == PropURL && len(c.URLs) > 1 {
		p.fail(urlProp, p.props[urlProp], "one data source only")
	}
	c.Username = strings.TrimSpace(p.props[PropUsername])
	c.Password = p.props[PropPassword]
	c.FetchTimeout = p.millis(PropFetchTimeout, c.FetchTimeout)
	c.RetryAfter = p.millis(PropRetryAfter, c.RetryAfter)
	if c.FetchTimeout < 10*time.Millisecond || c.FetchTimeout > time.Minute {
		p.fail(PropFetchTimeout, msString(c.FetchTimeout), "outside [10, 60000]")
	}
	if c.RetryAfter > time.Minute {
		p.fail(PropRetryAfter, msString(c.RetryAfter), "outside [0, 60000]")
	}
	return c
}
