package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSlotFillingFromTheCommandLine plays the README's slot-filling turns
// with graphctl run and resume on a fresh data dir, each turn a new command
// as a new process would run it: the second turn stops before the
// requirements check (a debugging stop) and resume goes on to the tool. Bad
// input is a usage error that names what is wrong, and changes nothing.
func TestSlotFillingFromTheCommandLine(t *testing.T) {
	graph := filepath.Join(repoRoot(t), "graphs", "slot_filling.cue")
	data := filepath.Join(t.TempDir(), "data")
	steps := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"first turn asks for the goal", []string{"run", graph, "--thread", "demo", "-i", "My dishwasher WDT780SAEM1 is leaking"}, 0,
			"Got it: model WDT780SAEM1. I noted the symptoms: leaking. What would you like to do?",
			"[thread demo; next turn: graphctl run " + graph + " --thread demo -i \"MESSAGE\" --data-dir " + data + "]"},
		{"second turn stops before the check", []string{"run", graph, "--thread", "demo", "-i", "I want to fix it", "--interrupt-before", "check_requirements"}, 0,
			"· stopped before node check_requirements (--interrupt-before)",
			"[thread demo stopped before node check_requirements: graphctl resume " + graph + " --thread demo --data-dir " + data + " goes on]"},
		{"resume runs the diagnosis with the remembered fields", []string{"resume", graph, "--thread", "demo"}, 0,
			"[TOOL USED: diagnose_repair]\n\nBased on your symptoms (leaking) for WDT780SAEM1", "· tool diagnose_repair: COMPLETED"},
		{"a goal that is not one of the goals", []string{"run", graph, "--thread", "demo", "--input", `{"goal": "dance"}`}, 2,
			"", `state field "goal": "dance" is not one of the allowed values "install_instruction", "check_compatibility", "diagnose_repair"`},
		{"a misspelt field", []string{"run", graph, "--thread", "demo", "--input", `{"modle": "WDT780SAEM1"}`}, 2,
			"", `"modle" is not a state field of graph "slot_filling"`},
		{"an empty message", []string{"run", graph, "--thread", "demo", "-i", " "}, 2, "", "-i: the message is empty"},
		{"a thread that does not exist", []string{"resume", graph, "--thread", "nope"}, 1, "", `no thread "nope"`},
		{"the thread is as the bad input found it", []string{"threads", "show", "demo"}, 0, `goal: "diagnose_repair"`, ""},
	}
	for _, s := range steps {
		out, errOut, code := run(t, append(s.args, "--data-dir", data)...)
		if code != s.code {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", s.name, code, s.code, out, errOut)
		}
		if !strings.Contains(out, s.stdout) || !strings.Contains(errOut, s.stderr) {
			t.Fatalf("%s: want stdout with %q and stderr with %q\nstdout: %s\nstderr: %s", s.name, s.stdout, s.stderr, out, errOut)
		}
	}
}
