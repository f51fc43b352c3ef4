package localtools_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/graphctl/graphctl/builtin-nodes/localtools"
	"github.com/graphctl/graphctl/builtin-nodes/tool"
)

func TestRegistered(t *testing.T) {
	for _, name := range []string{"current_time", "calculate", "convert_units"} {
		tl, ok := tool.Lookup(name)
		if !ok {
			t.Fatalf("tool %q is not registered", name)
		}
		if tl.Description == "" || tl.Input["type"] != "object" {
			t.Errorf("tool %q: description %q, input %v", name, tl.Description, tl.Input)
		}
	}
}

func TestCurrentTime(t *testing.T) {
	clock := func() time.Time { return time.Date(2025, 3, 14, 23, 30, 0, 0, time.UTC) }
	ct := localtools.CurrentTime(clock)
	tests := []struct {
		name     string
		args     map[string]any
		wantText string
		wantDate string
		wantErr  string
	}{
		{name: "default UTC", args: map[string]any{}, wantText: "2025-03-14 23:30:00, Friday (UTC", wantDate: "2025-03-14"},
		{name: "Shanghai is the next day", args: map[string]any{"timezone": "Asia/Shanghai"}, wantText: "2025-03-15 07:30:00, Saturday (Asia/Shanghai", wantDate: "2025-03-15"},
		{name: "New York in daylight saving time", args: map[string]any{"timezone": "America/New_York"}, wantText: "2025-03-14 19:30:00, Friday (America/New_York, EDT)", wantDate: "2025-03-14"},
		{name: "unknown zone", args: map[string]any{"timezone": "Mars/Olympus"}, wantErr: `timezone "Mars/Olympus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ct.Func(context.Background(), tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text, tt.wantText) {
				t.Errorf("text %q, want it to contain %q", res.Text, tt.wantText)
			}
			data := res.Data.(map[string]any)
			if data["date"] != tt.wantDate || data["unix"] != clock().Unix() {
				t.Errorf("data %v: want date %s and unix %d", data, tt.wantDate, clock().Unix())
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		src     string
		want    float64
		wantErr string
	}{
		{src: "17 * 23", want: 391},
		{src: "(1 + 2) * 3 - 4 / 8", want: 8.5},
		{src: "2 ^ 10", want: 1024},
		{src: "2 ** 0.5 * 2 ** 0.5", want: 2},
		{src: "-7 % 3", want: -1},
		{src: "7.5 % 2", want: 1.5},
		{src: "3000000000 * 4000000000", want: 1.2e19},
		{src: "9223372036854775807 + 1", want: 9223372036854775808},
		{src: "7 % 0", wantErr: "no finite value"},
		{src: "mod(7, 2)", wantErr: `function "mod" is not available`},
		{src: "sqrt(16) + pow(2, 3) + abs(-1.5) + max(1, 4) + min(3, 2) + floor(2.7) + ceil(2.1) + round(2.5)", want: 4 + 8 + 1.5 + 4 + 2 + 2 + 3 + 3},
		{src: "", wantErr: "empty"},
		{src: "1 / 0", wantErr: "no finite value"},
		{src: "sqrt(-1)", wantErr: "negative"},
		{src: "x + 1", wantErr: "variables are not available"},
		{src: `"a" + "b"`, wantErr: "not arithmetic"},
		{src: "1 == 1", wantErr: `operator "=="`},
		{src: "len([1, 2])", wantErr: `function "len" is not available`},
		{src: "[1, 2][0]", wantErr: "not arithmetic"},
		{src: "now()", wantErr: `function "now" is not available`},
		{src: "1 > 0 ? 1 : 2", wantErr: "not arithmetic"},
		{src: "1 +", wantErr: "not a valid expression"},
		{src: "pow(2)", wantErr: "takes 2 arguments"},
		{src: strings.Repeat("1+", 600) + "1", wantErr: "characters long"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := localtools.Evaluate(tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Evaluate(%q) = %v, %v; want an error containing %q", tt.src, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Evaluate(%q): %v", tt.src, err)
			}
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Evaluate(%q) = %v, want %v", tt.src, got, tt.want)
			}
		})
	}
}

func TestCalculateTool(t *testing.T) {
	res, err := localtools.Calculate().Func(context.Background(), map[string]any{"expression": "17 * 23"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "391" {
		t.Errorf("text %q, want 391", res.Text)
	}
	if d := res.Data.(map[string]any); d["result"] != 391.0 || d["expression"] != "17 * 23" {
		t.Errorf("data %v", d)
	}
	res, err = localtools.Calculate().Func(context.Background(), map[string]any{"expression": "10 / 4"})
	if err != nil || res.Text != "2.5" {
		t.Errorf("10 / 4: %q, %v; want 2.5", res.Text, err)
	}
}

func TestConvertUnits(t *testing.T) {
	tests := []struct {
		value    float64
		from, to string
		want     float64
		wantText string
		wantErr  string
	}{
		{value: 5, from: "km", to: "mi", want: 3.10685596118667, wantText: "5 km = 3.106855961 mi"},
		{value: 12, from: "inches", to: "ft", want: 1, wantText: "12 in = 1 ft"},
		{value: 1, from: "lb", to: "g", want: 453.59237},
		{value: 2, from: "Kilograms", to: "oz", want: 70.54792384},
		{value: 100, from: "C", to: "F", want: 212, wantText: "100 C = 212 F"},
		{value: -40, from: "fahrenheit", to: "celsius", want: -40},
		{value: 0, from: "K", to: "C", want: -273.15},
		{value: -500, from: "C", to: "K", wantErr: "below absolute zero"},
		{value: 1, from: "kg", to: "m", wantErr: "cannot convert kg (mass) to m (length)"},
		{value: 1, from: "furlong", to: "m", wantErr: `unknown unit "furlong"`},
	}
	ct := localtools.ConvertUnits()
	for _, tt := range tests {
		t.Run(tt.from+"->"+tt.to, func(t *testing.T) {
			res, err := ct.Func(context.Background(), map[string]any{"value": tt.value, "from": tt.from, "to": tt.to})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := res.Data.(map[string]any)["result"].(float64)
			if math.Abs(got-tt.want) > 1e-6 {
				t.Errorf("%g %s → %g %s, want %g", tt.value, tt.from, got, tt.to, tt.want)
			}
			if tt.wantText != "" && res.Text != tt.wantText {
				t.Errorf("text %q, want %q", res.Text, tt.wantText)
			}
		})
	}
}
