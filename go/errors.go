package toolctx

import "bytes"

// Error is an error the core reported: its stable code (a configuration
// error's, or `internal` for a malformed input) and its message, which never
// holds a secret.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return "toolctx: " + e.Code + ": " + e.Message }

// coreError reads the core's `<code>\n<message>`.
func coreError(b []byte) *Error {
	code, msg, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return &Error{Code: "internal", Message: string(b)}
	}
	return &Error{Code: string(code), Message: string(msg)}
}
