// Package loadtest measures graphctl serve under load against 127.0.0.1: runs
// per second of the slot-filling graph over HTTP with Badger, the memory of
// 1,000 open SSE streams, and the delay from a node's text token to its SSE
// frame at the client. It is a test-only package; run it with
//
//	go test ./server/loadtest -run TestLoad -load -v
//
// Figures are logged, never asserted.
package loadtest
