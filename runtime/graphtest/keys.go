package graphtest

// Keys lists the keys each level of a test case may hold, by level: "case",
// "turn", "expect", "mock" and "event" (an expected event). Any other key is
// reported by Check.
func Keys() map[string][]string {
	clone := func(s []string) []string { return append([]string(nil), s...) }
	return map[string][]string{
		"case": clone(caseKeys), "turn": clone(turnKeys), "expect": clone(expectKeys),
		"mock": clone(mockKeys), "event": clone(eventKeys),
	}
}

// Statuses lists the run statuses a turn's expect.status may name.
func Statuses() []string { return append([]string(nil), statuses...) }
