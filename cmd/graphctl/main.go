// Command graphctl validates, runs, tests and serves declarative agent graphs.
package main

func main() {}
