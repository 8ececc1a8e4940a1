// Package bench holds the Go benchmark (bench/go.sh): the go-sdk server
// plain, behind toolctx's middleware, and behind a hand-written golang-jwt
// middleware. Its code is in test files only.
package bench
