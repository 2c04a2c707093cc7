package router

import "time"

// Server is the rules file's server: section, shardflake's own settings for
// the proxy process. The proxy owns the meaning of each field.
type Server struct {
	Listen        string
	MetricsListen string
	Users         []User
	// TLSCert and TLSKey are PEM file paths; TLS is offered when both are set.
	TLSCert string
	TLSKey  string
	// MaxConnections caps client connections; 0 means the default.
	MaxConnections   int
	HandshakeTimeout time.Duration
	StatementTimeout time.Duration
}

// User is one account clients log in with.
type User struct {
	Name     string
	Password string
}
