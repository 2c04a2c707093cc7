package proxy

import "strings"

// errLine returns err's message on one line, for logs. slog's text
// handler prints an error value with %+v, and the errors of go-mysql's
// client carry a stack trace there; the message alone says what failed.
func errLine(err error) string {
	if err == nil {
		return ""
	}
	msg := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return msg
}
