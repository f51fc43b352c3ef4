// Package localtools registers builtin Go tools that work offline, in the
// builtin-nodes/tool registry:
//
//   - current_time  {timezone?}: the current date and time in an IANA time
//     zone (UTC by default). The zone database is embedded in the binary.
//   - calculate     {expression}: an arithmetic expression evaluated with
//     expr-lang, restricted to numbers, the operators + - * / % ^ ** and the
//     functions abs, ceil, floor, round, min, max, sqrt, pow; it reads no
//     variables and calls nothing else.
//   - convert_units {value, from, to}: converts between units of length,
//     mass or temperature.
//
// Graphs call them with the tool node, offer them to a model from the llm
// node, or serve them over MCP with an mcp_servers entry {builtin: true}.
package localtools

import (
	"context"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones for current_time on systems without a zone database

	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

func init() {
	tool.MustRegister(CurrentTime(time.Now))
	tool.MustRegister(Calculate())
	tool.MustRegister(ConvertUnits())
}

// CurrentTime returns the current_time tool reading the clock now.
func CurrentTime(now func() time.Time) tool.Tool {
	return tool.Tool{
		Name:        "current_time",
		Description: "Returns the current date, time and weekday in an IANA time zone (default UTC).",
		Input: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"timezone": map[string]any{"type": "string", "description": "IANA time zone name such as Europe/Paris or Asia/Shanghai; default UTC"},
			},
		},
		Func: func(_ context.Context, args map[string]any) (tool.Result, error) {
			zone, _ := args["timezone"].(string)
			zone = strings.TrimSpace(zone)
			if zone == "" {
				zone = "UTC"
			}
			loc, err := time.LoadLocation(zone)
			if err != nil {
				return tool.Result{}, fmt.Errorf("current_time: timezone %q is not an IANA time zone name (e.g. Europe/Paris): %w", zone, err)
			}
			t := now().In(loc)
			name, offset := t.Zone()
			text := fmt.Sprintf("%s, %s (%s, %s)", t.Format("2006-01-02 15:04:05"), t.Weekday(), zone, name)
			return tool.Result{Text: text, Data: map[string]any{
				"timezone":       zone,
				"iso":            t.Format(time.RFC3339),
				"date":           t.Format("2006-01-02"),
				"time":           t.Format("15:04:05"),
				"weekday":        t.Weekday().String(),
				"unix":           t.Unix(),
				"utc_offset_sec": offset,
			}}, nil
		},
	}
}
