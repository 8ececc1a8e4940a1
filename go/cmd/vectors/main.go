// Command vectors runs verdict vector files (docs/VECTORS.md) over HTTP:
// every case is sent from a real client on 127.0.0.1 through
// toolctx.Middleware in front of a go-sdk MCP server, and judged on what
// reached the server (pass, accept with its context, the forwarded
// headers) or on the refusal written back.
//
//	go run ./cmd/vectors FILE...
//
// Prints one line per failed case, then `N passed, N failed`; exits 1 when
// a case failed or a file could not be run (a helper vector file is not a
// verdict file). This runner has the verifier only: a convention table case
// or an AIVAX file fails, as npm's runner without conventions does.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: vectors FILE...")
		os.Exit(2)
	}
	srv, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer srv.Close()
	t := &tally{}
	for _, path := range os.Args[1:] {
		runFile(srv, path, t)
	}
	for _, line := range t.failures {
		fmt.Println(line)
	}
	if t.forward > 0 {
		fmt.Printf("%d cases checked expect.forward through the middleware\n", t.forward)
	}
	fmt.Printf("%d passed, %d failed\n", t.passed, t.failed)
	if t.failed > 0 || t.passed == 0 {
		os.Exit(1)
	}
}
