package load

import (
	"fmt"
	"testing"
)

const validCUE = `package graphs

dsl_version: "graphctl/v1"
name:        "small"
version:     "1.0.0"
description: "a small graph"

state: {
	messages: {type: "messages"}
	goal: {type: "string", enum: ["a", "b"], default: "a"}
	count: {type: "int", reducer: "add"}
	tags: {type: "list<string>", reducer: {expr: "old + new"}}
}

vars: {threshold: 0.5, names: ["x", "y"]}

start: "greet"

defaults: {recursion_limit: 40, llm: "openai:gpt-4o", custom: {a: 1}}

nodes: {
	greet: {
		type: "loadtest_reply"
		config: text: "Hello"
		next: "route_goal"
		timeout: "30s"
		retry: {max_attempts: 3, initial_interval: "1s", backoff: 2, max_interval: "10s", jitter: true, on: ["timeout"]}
	}
	route_goal: {
		type: "loadtest_route"
		routes: [
			{when: "goal == 'a'", to: "set_a"},
			{when: "goal == 'b'", to: "fan"},
		]
		default: "END"
	}
	set_a: {
		type: "loadtest_set"
		config: set: goal: "'b'"
		next: ["fan", "greet2"]
		catch: [{on: ["tool_error"], to: "END"}]
	}
	fan: {
		type: "loadtest_reply"
		config: {text: "item", role: "system"}
		map: {over: "tags", to: "greet2"}
	}
	greet2: {
		type: "loadtest_reply"
		config: text: "Bye"
		wait_for: ["fan", "set_a"]
		next: "END"
	}
}

tests: [{name: "first", turns: [{user: "hi"}]}]
`

func TestExplore(t *testing.T) {
	g, d := Source("small.cue", []byte(validCUE))
	fmt.Println(d)
	fmt.Printf("%+v\n", g)
	for _, n := range g.Nodes {
		fmt.Printf("%+v\n", n)
	}
	for _, n := range g.State {
		fmt.Printf("%+v\n", n)
	}
	fmt.Println(g.Pos["nodes.route_goal.routes.0.when"], g.Pos["nodes.greet"], g.Pos["tests.0"])
}
