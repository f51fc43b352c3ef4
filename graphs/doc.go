// Package graphs holds graphctl's product graphs as CUE files: slot_filling
// (an appliance-repair assistant that fills slots before it acts) and
// cognitive (emotion, long-term memory, a reasoning model with MCP tools,
// confirmations that suspend the thread, image OCR). Each has its declarative
// tests in <graph>_test.cue; this package's Go tests validate every graph in
// graphs/ and examples/ and run those tests.
package graphs
